// Package argocd runs apimsync's Argo CD health check (config/argocd/health.lua) the way Argo CD does:
// with gopher-lua, the object as the global `obj`, and a table {status, message} as the result.
package argocd

import (
	"fmt"
	"os"
	"path/filepath"

	lua "github.com/yuin/gopher-lua"
)

// Health is what the health script says of one object.
type Health struct {
	Status  string
	Message string
}

// Script reads config/argocd/health.lua from the repository root.
func Script(repoRoot string) (string, error) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "config", "argocd", "health.lua"))
	return string(b), err
}

// Evaluate runs the health script over obj (an object as unstructured data).
func Evaluate(script string, obj map[string]any) (Health, error) {
	L := lua.NewState(lua.Options{SkipOpenLibs: false})
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString(script); err != nil {
		return Health{}, fmt.Errorf("health script failed: %w", err)
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		return Health{}, fmt.Errorf("health script returned %s, not a table", L.Get(-1).Type())
	}
	return Health{Status: lua.LVAsString(ret.RawGetString("status")), Message: lua.LVAsString(ret.RawGetString("message"))}, nil
}

// toLua converts JSON-like Go data into Lua values, as Argo CD does for objects.
func toLua(L *lua.LState, v any) lua.LValue {
	switch t := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(t)
	case string:
		return lua.LString(t)
	case int64:
		return lua.LNumber(t)
	case int:
		return lua.LNumber(t)
	case float64:
		return lua.LNumber(t)
	case map[string]any:
		tbl := L.NewTable()
		for k, e := range t {
			tbl.RawSetString(k, toLua(L, e))
		}
		return tbl
	case []any:
		tbl := L.NewTable()
		for _, e := range t {
			tbl.Append(toLua(L, e))
		}
		return tbl
	default:
		return lua.LString(fmt.Sprint(t))
	}
}
