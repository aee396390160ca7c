// Package docs holds no code, only tests that fail when the documents stop
// being true: the package listing, the Go names they cite, the make targets,
// the configuration table and the periodic jobs are checked against the
// code, so a rename or a new package cannot leave a document behind.
package docs

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// root is the module's root: go test runs a package's tests in its folder.
const root = ".."

// The documents whose code spans and commands are checked.
func docPaths(t *testing.T) []string {
	t.Helper()
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"README.md"}
	for _, p := range more {
		paths = append(paths, filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator))))
	}
	return append(paths, "internal/lock/README.md")
}

// TestArchitectureNamesEveryPackage: architecture.md's "Packages and
// folders" names every package of the module, and every folder it names
// exists.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	const doc = "docs/architecture.md"
	d := readDoc(t, doc)
	heading, _ := d.section(t, "Packages and folders")
	block := d.firstCodeBlock(t, "Packages and folders")
	named := map[string]bool{}
	for _, l := range block {
		// A listed folder starts its line; continuation lines are indented.
		field, _, _ := strings.Cut(l.text, " ")
		if field == "" || !strings.HasSuffix(field, "/") {
			continue
		}
		named[strings.TrimSuffix(field, "/")] = true
		if info, err := os.Stat(filepath.Join(root, field)); err != nil || !info.IsDir() {
			t.Errorf("%s:%d: %s is listed under Packages and folders but is not a folder of the repository", doc, l.n, field)
		}
	}
	module := goList(t, "list", "-m")[0]
	for _, path := range goList(t, "list", "./...") {
		folder := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if folder == "" {
			continue // the module's root is not a folder to list
		}
		if !named[folder] {
			t.Errorf("%s:%d: package %s (folder %s/) is missing from the Packages and folders listing", doc, heading, path, folder)
		}
	}
}

// TestGoNamesInDocsResolve: every `pkg.Name`, `pkg.Type.Member` or
// `Type.Member` in a document's code spans names something that exists in
// the module or in a package it imports.
func TestGoNamesInDocsResolve(t *testing.T) {
	idx := loadIndex(t)
	for _, doc := range docPaths(t) {
		for _, span := range readDoc(t, doc).codeSpans() {
			name, ok := goName(span.text)
			if !ok {
				continue
			}
			if problem := idx.resolve(name); problem != "" {
				t.Errorf("%s:%d: `%s`: %s", doc, span.n, span.text, problem)
			}
		}
	}
}

// TestMakeTargetsInDocsExist: every `make NAME` the documents tell someone
// to run is a target of the Makefile.
func TestMakeTargetsInDocsExist(t *testing.T) {
	targets := makeTargets(t)
	makeCall := regexp.MustCompile(`\bmake ([a-z0-9-]+)`)
	for _, doc := range docPaths(t) {
		d := readDoc(t, doc)
		for _, span := range append(d.codeSpans(), d.fencedLines()...) {
			for _, m := range makeCall.FindAllStringSubmatch(span.text, -1) {
				if !targets[m[1]] {
					t.Errorf("%s:%d: `make %s`: the Makefile has no target %s", doc, span.n, m[1], m[1])
				}
			}
		}
	}
}

// TestConfigurationTableIsTheConfiguration: operations.md's
// "Configuration" table has a row for every variable internal/config reads,
// and every variable in it is read.
func TestConfigurationTableIsTheConfiguration(t *testing.T) {
	const doc = "docs/operations.md"
	heading, rows := readDoc(t, doc).tableFirstColumn(t, "Configuration")
	documented := backquotedIn(rows)
	tags := configTags(t)
	for _, name := range slices.Sorted(maps.Keys(tags)) {
		if !documented[name] {
			t.Errorf("%s:%d: internal/config reads %s (field %s) but the Configuration table has no row for it", doc, heading, name, tags[name])
		}
	}
	literals := loadIndex(t).literals
	for _, row := range rows {
		for _, name := range backquoted(row.text) {
			// OTEL_* variables are read by the OpenTelemetry SDK, not by
			// code of the module; other variables are read through a
			// config tag or by name (os.Getenv("NAME")).
			if tags[name] == "" && !literals[name] && !strings.HasPrefix(name, "OTEL_") {
				t.Errorf("%s:%d: %s is in the Configuration table but nothing in the code reads it", doc, row.n, name)
			}
		}
	}
}

// TestPeriodicJobsAreListed: operations.md's "Periodic jobs" table lists
// the jobs internal/app/jobs.go runs, no more, no fewer.
func TestPeriodicJobsAreListed(t *testing.T) {
	const doc = "docs/operations.md"
	heading, rows := readDoc(t, doc).tableFirstColumn(t, "Periodic jobs")
	listed := backquotedIn(rows)
	jobs := periodicJobs(t)
	for _, name := range jobs {
		if !listed[name] {
			t.Errorf("%s:%d: job %s (internal/app/jobs.go) is missing from the Periodic jobs table", doc, heading, name)
		}
	}
	for _, row := range rows {
		for _, name := range backquoted(row.text) {
			if !slices.Contains(jobs, name) {
				t.Errorf("%s:%d: %s is in the Periodic jobs table but internal/app/jobs.go runs no such job", doc, row.n, name)
			}
		}
	}
}

// ---- Markdown ----

// line is a piece of a document and the line number (from 1) it starts on.
type line struct {
	n    int
	text string
}

// mdDoc is a document's lines, each marked as inside a fenced code block
// or not.
type mdDoc struct {
	path   string
	lines  []string
	fenced []bool
}

func readDoc(t *testing.T, path string) *mdDoc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	d := &mdDoc{path: path, lines: strings.Split(string(data), "\n")}
	in := false
	for _, l := range d.lines {
		fence := strings.HasPrefix(l, "```")
		if fence {
			in = !in
		}
		// The fence lines themselves count as inside.
		d.fenced = append(d.fenced, in || fence)
	}
	return d
}

// codeSpans returns the inline code spans (`...`) outside fenced blocks. A
// span may run over a line break, so a paragraph is searched whole.
func (d *mdDoc) codeSpans() []line {
	span := regexp.MustCompile("`([^`]+)`")
	var spans []line
	start := 0
	flush := func(end int) {
		para := strings.Join(d.lines[start:end], "\n")
		for _, m := range span.FindAllStringSubmatchIndex(para, -1) {
			n := start + 1 + strings.Count(para[:m[0]], "\n")
			spans = append(spans, line{n, para[m[2]:m[3]]})
		}
	}
	for i, l := range d.lines {
		if d.fenced[i] || strings.TrimSpace(l) == "" {
			flush(i)
			start = i + 1
		}
	}
	flush(len(d.lines))
	return spans
}

// fencedLines returns the lines of the fenced code blocks.
func (d *mdDoc) fencedLines() []line {
	var lines []line
	for i, l := range d.lines {
		if d.fenced[i] && !strings.HasPrefix(l, "```") {
			lines = append(lines, line{i + 1, l})
		}
	}
	return lines
}

// section returns the line of the "## title" heading and the lines under
// it, up to the next heading of level 2 or above. The test fails if there
// is none.
func (d *mdDoc) section(t *testing.T, title string) (heading int, lines []line) {
	t.Helper()
	in := false
	for i, l := range d.lines {
		isHeading := !d.fenced[i] && (strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "# "))
		switch {
		case isHeading && l == "## "+title:
			heading, in = i+1, true
		case isHeading:
			in = false
		case in:
			lines = append(lines, line{i + 1, l})
		}
	}
	if heading == 0 {
		t.Fatalf("%s: no section %q", d.path, "## "+title)
	}
	return heading, lines
}

// firstCodeBlock returns the lines of the section's first fenced block.
func (d *mdDoc) firstCodeBlock(t *testing.T, title string) []line {
	t.Helper()
	var block []line
	_, lines := d.section(t, title)
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l.text, "```") && block == nil:
			block = []line{}
		case strings.HasPrefix(l.text, "```"):
			return block
		case block != nil:
			block = append(block, l)
		}
	}
	t.Fatalf("%s: section %q has no code block", d.path, title)
	return nil
}

// tableFirstColumn returns the section's heading line and the first cell
// of each row of its table whose first cell is code (`NAME`): the header
// and the rule have none.
func (d *mdDoc) tableFirstColumn(t *testing.T, title string) (heading int, cells []line) {
	t.Helper()
	heading, lines := d.section(t, title)
	for _, l := range lines {
		if !strings.HasPrefix(l.text, "| `") {
			continue
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(l.text, "|"), "|")
		cells = append(cells, line{l.n, cell})
	}
	if cells == nil {
		t.Fatalf("%s:%d: section %q has no table rows starting with | `", d.path, heading, title)
	}
	return heading, cells
}

// backquotedIn is the set of the names in code spans of cells.
func backquotedIn(cells []line) map[string]bool {
	names := map[string]bool{}
	for _, c := range cells {
		for _, name := range backquoted(c.text) {
			names[name] = true
		}
	}
	return names
}

var oneWordSpan = regexp.MustCompile("`([A-Za-z0-9_-]+)`")

// backquoted returns the code spans of s that are one word
// (letters, digits, - and _): `NAME`, not `x=1` or "…".
func backquoted(s string) []string {
	var names []string
	for _, m := range oneWordSpan.FindAllStringSubmatch(s, -1) {
		names = append(names, m[1])
	}
	return names
}

// ---- Go names in code spans ----

// fileExtensions end code spans that are file names (`acquire.lua`,
// `api.http`), not Go names.
var fileExtensions = map[string]bool{}

func init() {
	for _, ext := range strings.Fields("go lua md sql json jsonl http yml yaml sh js css html txt env log mod sum conf toml png svg ts") {
		fileExtensions[ext] = true
	}
}

// goName returns the parts of a code span of the form A.B or A.B.C
// (identifiers only), with a trailing call's arguments dropped
// (`lock.New(...)` is lock.New); ok is false for anything else.
func goName(span string) (parts []string, ok bool) {
	if open := strings.Index(span, "("); open > 0 && strings.HasSuffix(span, ")") {
		span = span[:open]
	}
	if strings.ContainsAny(span, "/(* ") {
		return nil, false
	}
	parts = strings.Split(span, ".")
	if len(parts) < 2 || len(parts) > 3 || fileExtensions[parts[len(parts)-1]] {
		return nil, false
	}
	for _, p := range parts {
		if !token.IsIdentifier(p) {
			return nil, false
		}
	}
	return parts, true
}

// index is what the Go names are resolved against, from the module's files
// (tests included) and those of every package it imports.
type index struct {
	// top: a package name's top-level identifiers, over every package of
	// that name (there are several json and trace packages).
	top map[string]map[string]bool
	// members: "pkg.Type" → its methods and fields, its own only.
	members map[string]map[string]bool
	// embeds: "pkg.Type" → the types whose members are also its own:
	// embedded fields and interfaces, and what a defined type or alias
	// names (an alias has its target's members; a defined type has only
	// its fields, but counting the methods too errs on the lenient side).
	embeds map[string][]string
	// types: a type name → every "pkg.Type" of that name: the module's
	// types and the exported ones of other packages. The documents cite
	// no other package's unexported type, and counting them would make
	// `window.seatmap` (JavaScript) a Go name.
	types map[string][]string
	// literals: the string literals of the module's non-test files.
	literals map[string]bool
}

// notGo are code spans of the Go form A.B that the documents use for
// something else, where A happens to be an unexported type of the module.
var notGo = map[string]bool{
	"client.address": true, // OpenTelemetry's attribute (ratelimit has a type client)
	"window.seatmap": true, // the page's JavaScript hook (reservation has a type window)
}

// resolve returns why a name does not resolve, or "" if it does or cannot
// be judged.
func (idx *index) resolve(parts []string) string {
	if notGo[strings.Join(parts, ".")] {
		return ""
	}
	inPackage, isPackage := idx.resolveInPackage(parts)
	inType, isType := idx.resolveInType(parts)
	switch {
	// A may name both a package and a type (`target.tryAcquire`: lock's
	// type target, and chromedp's package target): either reading will do.
	case isPackage && inPackage == "", isType && inType == "":
		return ""
	// OpenTelemetry names spans and attributes in dotted lower case
	// (`lock.acquire`, `http.route`), often after a package; a Go name of
	// a package that the documents cite is exported or camelCase.
	case isPackage && lowerDotted(parts):
		return ""
	case isPackage:
		return inPackage
	case isType:
		return inType
	}
	return "" // a variable (`r.Context`): nothing to judge it by
}

// resolveInPackage reads A.B[.C] as package A's B (and type B's member C);
// isPackage is false if no package is called A.
func (idx *index) resolveInPackage(parts []string) (problem string, isPackage bool) {
	a, b := parts[0], parts[1]
	top, ok := idx.top[a]
	if !ok {
		return "", false
	}
	if !top[b] {
		return fmt.Sprintf("package %s has no %s", a, b), true
	}
	// C is judged only when B is a type (not a variable).
	key := a + "." + b
	if _, isType := idx.members[key]; len(parts) == 3 && isType && !idx.hasMember(key, parts[2]) {
		return fmt.Sprintf("%s.%s has no method or field %s", a, b, parts[2]), true
	}
	return "", true
}

// resolveInType reads A.B as type A's member B (C is not judged); isType
// is false if no type is called A.
func (idx *index) resolveInType(parts []string) (problem string, isType bool) {
	keys, ok := idx.types[parts[0]]
	if !ok {
		return "", false
	}
	for _, key := range keys {
		if idx.hasMember(key, parts[1]) {
			return "", true
		}
	}
	return fmt.Sprintf("no type %s has a method or field %s", parts[0], parts[1]), true
}

// lowerDotted reports whether every part is lower case, digits and _.
func lowerDotted(parts []string) bool {
	return lowerName.MatchString(strings.Join(parts, "."))
}

var lowerName = regexp.MustCompile(`^[a-z0-9_.]+$`)

// hasMember reports whether the type key, or a type it embeds, has name.
func (idx *index) hasMember(key, name string) bool {
	seen := map[string]bool{}
	var has func(string) bool
	has = func(key string) bool {
		if seen[key] {
			return false
		}
		seen[key] = true
		if idx.members[key][name] {
			return true
		}
		return slices.ContainsFunc(idx.embeds[key], has)
	}
	return has(key)
}

// loadIndex returns the index, built once for every test that needs it.
func loadIndex(t *testing.T) *index {
	t.Helper()
	idx, err := builtIndex()
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

var builtIndex = sync.OnceValues(buildIndex)

// source is a Go file to parse, and whether it is of the module.
type source struct {
	path     string
	inModule bool
}

// literals says whether the file's string literals are wanted: those of
// the module's code, where the configuration's variables are read.
func (src source) literals() bool {
	return src.inModule && !strings.HasSuffix(src.path, "_test.go")
}

func buildIndex() (*index, error) {
	files, err := sourceFiles()
	if err != nil {
		return nil, err
	}
	// Parsing is most of the time (tens of megabytes of source): spread it
	// over the CPUs, each worker with an index of its own, and keep no
	// syntax tree once its file is indexed.
	parts := make([]*index, runtime.GOMAXPROCS(0))
	errs := make([]error, len(parts))
	next := make(chan source)
	var wg sync.WaitGroup
	for w := range parts {
		parts[w] = newIndex()
		wg.Go(func() {
			for src := range next {
				f, err := parseSource(src)
				if err != nil {
					errs[w] = err
					continue
				}
				parts[w].add(f, src.inModule)
				if src.literals() {
					parts[w].addLiterals(f)
				}
			}
		})
	}
	for _, src := range files {
		next <- src
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	idx := newIndex()
	for _, part := range parts {
		idx.merge(part)
	}
	return idx, nil
}

func newIndex() *index {
	return &index{top: map[string]map[string]bool{}, members: map[string]map[string]bool{},
		embeds: map[string][]string{}, types: map[string][]string{}, literals: map[string]bool{}}
}

// merge adds what other indexed to idx.
func (idx *index) merge(other *index) {
	for pkg, names := range other.top {
		if idx.top[pkg] == nil {
			idx.top[pkg] = map[string]bool{}
		}
		maps.Copy(idx.top[pkg], names)
	}
	for key, names := range other.members {
		if idx.members[key] == nil {
			idx.members[key] = map[string]bool{}
		}
		maps.Copy(idx.members[key], names)
	}
	for key, embeds := range other.embeds {
		idx.embeds[key] = append(idx.embeds[key], embeds...)
	}
	for name, keys := range other.types {
		idx.types[name] = append(idx.types[name], keys...)
	}
	maps.Copy(idx.literals, other.literals)
}

// sourceFiles lists every Go file of the module's packages (tests included;
// go list leaves out .data/ and testdata/) and the files the build uses of
// every package they import, the standard library's too.
func sourceFiles() ([]source, error) {
	cmd := exec.Command("go", "list", "-deps", "-test",
		"-f", "{{.Dir}}|{{.ImportPath}}|{{if .Module}}{{.Module.Main}}{{end}}|{{join .GoFiles \",\"}},{{join .CgoFiles \",\"}}",
		"./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps: %w", err)
	}
	var files []source
	seen := map[string]bool{}
	for l := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimSpace(l), "|")
		dir, path, main := f[0], f[1], f[2] == "true"
		// -test adds each tested package's test main (pkg.test) and its
		// variants built with the tests (pkg [pkg.test]): same folders.
		if strings.HasSuffix(path, ".test") || seen[dir] {
			continue
		}
		seen[dir] = true
		if main {
			names, err := filepath.Glob(filepath.Join(dir, "*.go"))
			if err != nil {
				return nil, err
			}
			for _, name := range names {
				files = append(files, source{name, true})
			}
			continue
		}
		for name := range strings.SplitSeq(f[3], ",") {
			if name != "" {
				files = append(files, source{filepath.Join(dir, name), false})
			}
		}
	}
	return files, nil
}

// parseSource parses a file. Unless its string literals are wanted, only
// its declarations matter, not what its functions do nor what its tables
// hold, and those are most of the parsing, several times slower under go
// test -race: they are dropped first (withoutBodies), and the file is
// parsed whole if what is left does not parse.
func parseSource(src source) (*ast.File, error) {
	data, err := os.ReadFile(src.path)
	if err != nil {
		return nil, err
	}
	if !src.literals() {
		if f, err := parser.ParseFile(token.NewFileSet(), src.path, withoutBodies(data), parser.SkipObjectResolution); err == nil {
			return f, nil
		}
	}
	return parser.ParseFile(token.NewFileSet(), src.path, data, parser.SkipObjectResolution)
}

// withoutBodies empties what a top-level func or var declares between a
// first line ending with "{" and the next line that is "}": a function's
// body, a table's elements. In gofmt's layout every line between is
// indented, or empty; if one is not, the "}" closes something else (a
// table may end "0xFFFF}" on its last line, a raw string may hold a line
// "}") and the declaration is kept whole. Types are always kept whole, for
// their fields.
func withoutBodies(data []byte) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	var out bytes.Buffer
	out.Grow(len(data))
	for i := 0; i < len(lines); i++ {
		out.Write(lines[i])
		if end := bodyEnd(lines, i); end > i {
			out.Write(lines[end])
			i = end
		}
	}
	return out.Bytes()
}

// bodyEnd returns the index of the line that closes the body line i
// opens, or -1 if line i opens none or its body is not laid out by gofmt.
func bodyEnd(lines [][]byte, i int) int {
	head := string(bytes.TrimRight(lines[i], "\r\n"))
	opens := strings.HasPrefix(head, "func ") || strings.HasPrefix(head, "var ")
	if !opens || !strings.HasSuffix(head, "{") {
		return -1
	}
	for j := i + 1; j < len(lines); j++ {
		l := bytes.TrimRight(lines[j], "\r\n")
		switch {
		case string(l) == "}":
			return j
		case len(l) > 0 && l[0] != '\t':
			return -1
		}
	}
	return -1
}

// add records a file's top-level identifiers and its types' members.
func (idx *index) add(f *ast.File, inModule bool) {
	pkg := f.Name.Name
	top := idx.top[pkg]
	if top == nil {
		top = map[string]bool{}
		idx.top[pkg] = top
	}
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Recv == nil {
				top[decl.Name.Name] = true
			} else if recv := typeName(decl.Recv.List[0].Type); recv != "" {
				idx.member(pkg+"."+recv, decl.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				switch spec := spec.(type) {
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						top[n.Name] = true
					}
				case *ast.TypeSpec:
					top[spec.Name.Name] = true
					idx.addType(pkg, spec, inModule || spec.Name.IsExported())
				}
			}
		}
	}
}

// addType records a type's fields, interface methods and what it embeds.
// citable says whether a document may cite the type by its name alone.
func (idx *index) addType(pkg string, spec *ast.TypeSpec, citable bool) {
	key := pkg + "." + spec.Name.Name
	if citable {
		idx.types[spec.Name.Name] = append(idx.types[spec.Name.Name], key)
	}
	if idx.members[key] == nil {
		idx.members[key] = map[string]bool{}
	}
	var fields []*ast.Field
	switch typ := spec.Type.(type) {
	case *ast.StructType:
		fields = typ.Fields.List
	case *ast.InterfaceType:
		fields = typ.Methods.List
	default:
		idx.embed(pkg, key, typ)
	}
	for _, field := range fields {
		for _, n := range field.Names {
			idx.member(key, n.Name)
		}
		if len(field.Names) == 0 {
			// An embedded field is named by its type (`Config.Logger`).
			if name := typeName(field.Type); name != "" {
				idx.member(key, name[strings.LastIndex(name, ".")+1:])
			}
			idx.embed(pkg, key, field.Type)
		}
	}
}

func (idx *index) member(key, name string) {
	if idx.members[key] == nil {
		idx.members[key] = map[string]bool{}
	}
	idx.members[key][name] = true
}

// embed records that key has the members of the type expr names. A
// qualified name's qualifier is taken for the package's name, as it is
// unless the import is renamed.
func (idx *index) embed(pkg, key string, expr ast.Expr) {
	name := typeName(expr)
	if name == "" {
		return
	}
	if !strings.Contains(name, ".") {
		name = pkg + "." + name
	}
	idx.embeds[key] = append(idx.embeds[key], name)
}

// typeName returns the name a type expression refers to (T or pkg.T),
// through pointers and type arguments, or "" for a literal type.
func typeName(expr ast.Expr) string {
	switch e := expr.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			return x.Name + "." + e.Sel.Name
		}
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.IndexExpr:
		return typeName(e.X)
	case *ast.IndexListExpr:
		return typeName(e.X)
	case *ast.ParenExpr:
		return typeName(e.X)
	}
	return ""
}

// addLiterals records a file's string literals (os.Getenv("NAME")).
func (idx *index) addLiterals(f *ast.File) {
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				idx.literals[s] = true
			}
		}
		return true
	})
}

// ---- the code's side ----

// goList runs the go command in the module's root and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}

// makeTargets returns the Makefile's targets: the rules' names at the
// start of a line, and the .PHONY list.
func makeTargets(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	rule := regexp.MustCompile(`^([a-z0-9][a-z0-9-]*):([^=]|$)`)
	targets := map[string]bool{}
	for l := range strings.Lines(string(data)) {
		l = strings.TrimSuffix(l, "\n")
		if phony, ok := strings.CutPrefix(l, ".PHONY:"); ok {
			for _, name := range strings.Fields(phony) {
				targets[name] = true
			}
		}
		if m := rule.FindStringSubmatch(l); m != nil {
			targets[m[1]] = true
		}
	}
	return targets
}

// configTags returns the variables internal/config reads (its struct
// tags `env:"NAME,..."`), each with the field that reads it.
func configTags(t *testing.T) map[string]string {
	t.Helper()
	tags := map[string]string{}
	for _, f := range parseGoFiles(t, "internal/config") {
		ast.Inspect(f, func(n ast.Node) bool {
			field, ok := n.(*ast.Field)
			if !ok || field.Tag == nil {
				return true
			}
			tag, err := strconv.Unquote(field.Tag.Value)
			if err != nil {
				t.Fatal(err)
			}
			name, _, _ := strings.Cut(reflect.StructTag(tag).Get("env"), ",")
			if name != "" && name != "-" && len(field.Names) > 0 {
				tags[name] = field.Names[0].Name
			}
			return true
		})
	}
	if len(tags) == 0 {
		t.Fatal("internal/config: no env struct tags found")
	}
	return tags
}

// periodicJobs returns the names of the jobs newJobs (internal/app/jobs.go)
// makes: the first element of each job{...} literal, written as an
// element of a []job{...} or on its own.
func periodicJobs(t *testing.T) []string {
	t.Helper()
	const path = "internal/app/jobs.go"
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, path), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []string
	first := func(lit *ast.CompositeLit) {
		if len(lit.Elts) == 0 {
			return
		}
		if s, ok := lit.Elts[0].(*ast.BasicLit); ok && s.Kind == token.STRING {
			name, _ := strconv.Unquote(s.Value)
			jobs = append(jobs, name)
		}
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "newJobs" {
			continue
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			switch typ := lit.Type.(type) {
			case *ast.Ident:
				if typ.Name == "job" {
					first(lit)
				}
			case *ast.ArrayType:
				if elt, ok := typ.Elt.(*ast.Ident); ok && elt.Name == "job" {
					for _, e := range lit.Elts {
						if inner, ok := e.(*ast.CompositeLit); ok && inner.Type == nil {
							first(inner)
						}
					}
				}
			}
			return true
		})
	}
	if len(jobs) == 0 {
		t.Fatalf("%s: no job{...} literals in newJobs", path)
	}
	return jobs
}

// parseGoFiles parses the non-test Go files of a folder of the module.
func parseGoFiles(t *testing.T, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}
