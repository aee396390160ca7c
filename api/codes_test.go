package api_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seatlock/seatlock/api"
)

// The document's ProblemCode lists every code the service can answer, and
// nothing else: clients switch on it, generated ones as a typed enum. The
// codes are read from the service's source, every `Code: "…"` of a problem
// literal (problem.Error), so that a code added by any later change without
// its place in the document fails here, whether or not a test provokes it.
func TestProblemCodesAreTheServicesCodes(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas struct {
				ProblemCode struct {
					Enum []string `json:"enum"`
				} `json:"ProblemCode"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	documented := doc.Components.Schemas.ProblemCode.Enum
	answered := map[string]string{} // code: where it is written
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || !isProblemError(file.Name.Name, lit.Type) {
				return true
			}
			for _, elt := range lit.Elts {
				kv, ok := elt.(*ast.KeyValueExpr)
				if key, isIdent := kv.Key.(*ast.Ident); !ok || !isIdent || key.Name != "Code" {
					continue
				}
				value, ok := kv.Value.(*ast.BasicLit)
				if !ok || value.Kind != token.STRING {
					t.Errorf("%s: a problem's Code that is not a string literal: the test cannot check it", fset.Position(kv.Pos()))
					continue
				}
				code, err := strconv.Unquote(value.Value)
				if err != nil {
					t.Fatal(err)
				}
				answered[code] = fset.Position(kv.Pos()).String()
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(answered) < 10 {
		t.Fatalf("found only %d codes in the source (%v): the walk misses where they are written", len(answered), answered)
	}
	for code, where := range answered {
		if !slices.Contains(documented, code) {
			t.Errorf("%s answers %q, which components.schemas.ProblemCode does not list", where, code)
		}
	}
	for _, code := range documented {
		if _, ok := answered[code]; !ok {
			t.Errorf("ProblemCode lists %q, which nothing in the service answers", code)
		}
	}
}

// isProblemError reports whether a composite literal's type, in a file of
// package pkg, is the problem package's Error (problem.Error, or Error
// inside that package).
func isProblemError(pkg string, typ ast.Expr) bool {
	switch typ := typ.(type) {
	case *ast.SelectorExpr:
		pkg, ok := typ.X.(*ast.Ident)
		return ok && pkg.Name == "problem" && typ.Sel.Name == "Error"
	case *ast.Ident:
		return pkg == "problem" && typ.Name == "Error"
	}
	return false
}
