package convert

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// unknownFields lists the paths of the keys of v (a spec as JSON decodes it) that the Go type t does not
// declare: fields 3scale-operator does not have (a typo, or a newer version), which the conversion would
// otherwise lose without a word. Values kept as they are (json.RawMessage) are not looked into.
func unknownFields(path string, v any, t reflect.Type) []string {
	var out []string
	walkUnknown(path, v, t, &out)
	return out
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

func walkUnknown(path string, v any, t reflect.Type, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(m) {
			ft, known := fields[k]
			if !known {
				*out = append(*out, path+"."+k)
				continue
			}
			walkUnknown(path+"."+k, m[k], ft, out)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, k := range sortedKeys(m) {
			walkUnknown(path+"."+k, m[k], t.Elem(), out)
		}
	case reflect.Slice:
		s, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range s {
			walkUnknown(fmt.Sprintf("%s[%d]", path, i), e, t.Elem(), out)
		}
	}
}

// jsonFields returns the JSON names of a struct's fields (those of embedded structs included) and
// their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
