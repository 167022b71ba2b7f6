package controllers

import (
	"reflect"
	"strings"
	"testing"

	"github.com/apimsync/apimsync/controllers/engine"
)

// TestEveryKindForgetsEveryIDOfItsOldTenant (issue 42, item 1, as a rule of the engine): for every kind
// of the table, an object whose status holds remote ids everywhere it can — its own, its items', its
// users', its features', its metrics' — holds none after ForgetTenantIDs, which the engine calls when the
// provider account points at another tenant; only status.leftBehind (the old tenant's copy, announced)
// keeps one. A kind that adds an id to its status and forgets to forget it fails here.
func TestEveryKindForgetsEveryIDOfItsOldTenant(t *testing.T) {
	for _, k := range kinds {
		obj, ok := k.New().(engine.Object)
		if !ok {
			t.Fatalf("%s is not an engine.Object", k.Name())
		}
		status := reflect.ValueOf(obj).Elem().FieldByName("Status")
		ids := fillIDs(status, "Status")
		if len(ids) == 0 {
			t.Errorf("%s: no remote id found in its status to fill", k.Name())
		}
		obj.ForgetTenantIDs()
		for _, left := range heldIDs(status, "Status") {
			t.Errorf("%s: %s still holds the old tenant's id after ForgetTenantIDs", k.Name(), left)
		}
	}
}

// remoteIDField reports a status field that holds remote ids: an int64 named …ID, a map of them
// (…IDs), the items of a portal (structs with an ID), the built-in originals. LeftBehind is the old
// tenant's copy on purpose.
func remoteIDField(f reflect.StructField) bool {
	switch {
	case f.Name == "LeftBehind":
		return false
	case f.Type.Kind() == reflect.Int64 && strings.HasSuffix(f.Name, "ID"),
		f.Type.Kind() == reflect.Map && (strings.HasSuffix(f.Name, "IDs") || f.Name == "BuiltinOriginals"),
		f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct && hasIDField(f.Type.Elem()):
		return true
	}
	return false
}

func hasIDField(t reflect.Type) bool {
	_, ok := t.FieldByName("ID")
	return ok
}

// fillIDs sets every remote-id field of v (a struct, walked through embedded and nested structs) and
// returns their paths.
func fillIDs(v reflect.Value, path string) []string {
	var out []string
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		p := path + "." + f.Name
		switch {
		case remoteIDField(f):
			switch f.Type.Kind() {
			case reflect.Int64:
				fv.SetInt(94)
			case reflect.Map:
				m := reflect.MakeMap(f.Type)
				val := reflect.New(f.Type.Elem()).Elem()
				if val.Kind() == reflect.Int64 {
					val.SetInt(94)
				} else {
					val.SetString("tenant a's")
				}
				m.SetMapIndex(reflect.ValueOf("x"), val)
				fv.Set(m)
			case reflect.Slice:
				item := reflect.New(f.Type.Elem()).Elem()
				item.FieldByName("ID").SetInt(94)
				fv.Set(reflect.Append(fv, item))
			}
			out = append(out, p)
		case f.Type.Kind() == reflect.Struct:
			out = append(out, fillIDs(fv, p)...)
		}
	}
	return out
}

// heldIDs returns the paths of the remote-id fields of v that are not empty.
func heldIDs(v reflect.Value, path string) []string {
	var out []string
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		p := path + "." + f.Name
		switch {
		case remoteIDField(f) && f.Type.Kind() == reflect.Int64:
			if fv.Int() != 0 {
				out = append(out, p)
			}
		case remoteIDField(f):
			if fv.Len() > 0 {
				out = append(out, p)
			}
		case f.Type.Kind() == reflect.Struct:
			out = append(out, heldIDs(fv, p)...)
		}
	}
	return out
}
