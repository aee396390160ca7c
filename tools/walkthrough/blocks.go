package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// firstDocuments are pasted first, in this order: the README's quick start
// before the API's tour, and so on. Any other docs/*.md follows, in name
// order.
var firstDocuments = []string{
	"README.md",
	"docs/api.md",
	"docs/operations.md",
	"docs/performance.md",
	"docs/architecture.md",
}

// block is one ```sh block of a document, as pasted.
type block struct {
	// name is NN-doc-BB: the document's place among those pasted, its
	// name without .md, and the block's number in it (counting the empty
	// blocks, which are left out).
	name string
	text string // its lines, each ending in a newline
}

// documentOrder is the order the documents are pasted in: firstDocuments,
// then the other names of docs (the repository's docs/*.md, as
// slash-separated paths), sorted.
func documentOrder(docs []string) []string {
	order := slices.Clone(firstDocuments)
	others := slices.Sorted(slices.Values(docs))
	for _, doc := range others {
		if !slices.Contains(order, doc) {
			order = append(order, doc)
		}
	}
	return order
}

// documentBlocks reads the ```sh blocks of the documents under root, in
// documentOrder; a document root lacks is not counted.
func documentBlocks(root string) ([]block, error) {
	paths, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	var docs []string
	for _, p := range paths {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil, err
		}
		docs = append(docs, filepath.ToSlash(rel))
	}
	var blocks []block
	place := 0
	for _, doc := range documentOrder(docs) {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(doc)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		place++
		blocks = append(blocks, shBlocks(doc, place, string(text))...)
	}
	return blocks, nil
}

// shBlocks extracts the ```sh blocks of markdown, the document doc pasted
// in place. A block opens on a line that is exactly ```sh and closes on
// the next line that starts with ```.
func shBlocks(doc string, place int, markdown string) []block {
	prefix := fmt.Sprintf("%02d-%s", place, strings.TrimSuffix(path.Base(doc), ".md"))
	var (
		texts  []string // by block number - 1
		inside bool
	)
	for line := range strings.Lines(markdown) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "```sh":
			texts = append(texts, "")
			inside = true
		case strings.HasPrefix(line, "```"):
			inside = false
		case inside:
			texts[len(texts)-1] += line + "\n"
		}
	}
	var blocks []block
	for i, text := range texts {
		if text != "" {
			blocks = append(blocks, block{name: fmt.Sprintf("%s-%02d", prefix, i+1), text: text})
		}
	}
	return blocks
}

// theTwoCommands finds a line that runs `make run` or `make test`: the
// walkthrough runs around them, it does not paste them.
var theTwoCommands = regexp.MustCompile(`(?m)^make (run|test)\b`)

// notInWalkthrough starts the first line of a block that is not pasted,
// followed by the reason (say, it needs `make cluster`).
const notInWalkthrough = "# not in the walkthrough:"

// skipReason says why a block is not pasted, if it is not.
func skipReason(text string) (reason string, skip bool) {
	if theTwoCommands.MatchString(text) {
		return "the two commands", true
	}
	first, _, _ := strings.Cut(text, "\n")
	if reason, ok := strings.CutPrefix(first, notInWalkthrough); ok {
		return strings.TrimLeft(reason, " "), true
	}
	return "", false
}
