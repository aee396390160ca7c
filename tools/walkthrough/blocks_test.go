package main

import (
	"reflect"
	"testing"
)

func TestShBlocks(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		place    int
		markdown string
		want     []block
	}{
		{
			name:     "no block",
			doc:      "README.md",
			place:    1,
			markdown: "# Title\n\ntext\n",
		},
		{
			name:     "one block, its lines each ending in a newline",
			doc:      "README.md",
			place:    1,
			markdown: "intro\n```sh\nmake run\ncurl -s -w ' %{http_code}\\n' $API/   # 200\n```\nafter\n",
			want:     []block{{"01-README-01", "make run\ncurl -s -w ' %{http_code}\\n' $API/   # 200\n"}},
		},
		{
			name:     "a document under docs/ is named without its folder and .md",
			doc:      "docs/api.md",
			place:    2,
			markdown: "```sh\necho a\n```\n\n```sh\necho b\n```\n",
			want:     []block{{"02-api-01", "echo a\n"}, {"02-api-02", "echo b\n"}},
		},
		{
			name:     "other fences are not pasted, and any fence closes a block",
			doc:      "docs/operations.md",
			place:    3,
			markdown: "```json\n{}\n```\n```bash\necho no\n```\n```sh\necho yes\n```json\n{}\n```\n",
			want:     []block{{"03-operations-01", "echo yes\n"}},
		},
		{
			name:     "an empty block keeps its number and is left out",
			doc:      "docs/performance.md",
			place:    4,
			markdown: "```sh\n```\n```sh\necho two\n```\n",
			want:     []block{{"04-performance-02", "echo two\n"}},
		},
		{
			name:     "only a line that is exactly ```sh opens a block",
			doc:      "docs/x.md",
			place:    6,
			markdown: "```sh title\necho no\n```\n ```sh\necho no\n```\n```shell\necho no\n```\n",
		},
		{
			name:     "a block left open runs to the end of the text, its last line without a newline too",
			doc:      "docs/x.md",
			place:    6,
			markdown: "```sh\necho a\necho b",
			want:     []block{{"06-x-01", "echo a\necho b\n"}},
		},
		{
			name:     "blank lines inside a block are kept",
			doc:      "README.md",
			place:    1,
			markdown: "```sh\necho a\n\necho b\n```\n",
			want:     []block{{"01-README-01", "echo a\n\necho b\n"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shBlocks(tt.doc, tt.place, tt.markdown); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("shBlocks(%q, %d, %q) = %q, want %q", tt.doc, tt.place, tt.markdown, got, tt.want)
			}
		})
	}
}

func TestDocumentOrder(t *testing.T) {
	first := []string{"README.md", "docs/api.md", "docs/operations.md", "docs/performance.md", "docs/architecture.md"}
	tests := []struct {
		name string
		docs []string
		want []string
	}{
		{"no docs/*.md", nil, first},
		{
			"the first documents once each, whatever order they come in",
			[]string{"docs/performance.md", "docs/api.md", "docs/architecture.md", "docs/operations.md"},
			first,
		},
		{
			"others after them, in name order",
			[]string{"docs/zeta.md", "docs/api.md", "docs/alpha.md"},
			append(first[:len(first):len(first)], "docs/alpha.md", "docs/zeta.md"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := documentOrder(tt.docs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("documentOrder(%q) = %q, want %q", tt.docs, got, tt.want)
			}
		})
	}
}

func TestSkipReason(t *testing.T) {
	tests := []struct {
		name       string
		text       string
		wantReason string
		wantSkip   bool
	}{
		{"curls are pasted", "curl -s -w ' %{http_code}\\n' $API/   # 200\n", "", false},
		{"make run", "make run\n", "the two commands", true},
		{"make test after other lines", "cd seatlock\nmake test\n", "the two commands", true},
		{"make run with arguments", "make run HTTP_ADDR=127.0.0.1:9090\n", "the two commands", true},
		{"make run-like target names count as make run", "make run-x\n", "the two commands", true},
		{"a longer word is another target", "make runner\nmake tests\n", "", false},
		{"make run not at the start of its line", "  make run\necho make test\n", "", false},
		{"other make targets", "make smoke\nmake hammer ARGS='-duration 2s'\n", "", false},
		{
			"the first line says why",
			"# not in the walkthrough: it needs make cluster\nmake cluster\n",
			"it needs make cluster", true,
		},
		{
			"no space after the colon",
			"# not in the walkthrough:slow\n",
			"slow", true,
		},
		{
			"only the first line counts",
			"echo a\n# not in the walkthrough: too late\n",
			"", false,
		},
		{
			"the two commands win over a reason",
			"# not in the walkthrough: needs a cluster\nmake test\n",
			"the two commands", true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, skip := skipReason(tt.text)
			if reason != tt.wantReason || skip != tt.wantSkip {
				t.Errorf("skipReason(%q) = %q, %v, want %q, %v", tt.text, reason, skip, tt.wantReason, tt.wantSkip)
			}
		})
	}
}
