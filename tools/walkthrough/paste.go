package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// curlWrapper is what bash runs for a block: the block, sourced from the
// file $1, with curl replaced by a function that appends the status mark
// to the end of each curl's own -w format. curl keeps only the last -w, so
// it prints the block's format for the reader, then the mark, on stderr,
// for the walkthrough; every curl appends its status to $STATUS_LOG in the
// order they end, its other stderr (and a block's stderr -w) too. A curl
// without -w does not show its status to whoever pastes the block: it
// fails.
const curlWrapper = `
curl() {
	local args=() found=
	while [ $# -gt 0 ]; do
		case $1 in
		-w | --write-out)
			[ $# -ge 2 ] || { echo "walkthrough: $1 without a format" >&2; return 2; }
			args+=("$1" "$2%{stderr}$MARK %{http_code}\n"); found=1; shift 2 ;;
		*) args+=("$1"); shift ;;
		esac
	done
	[ -n "$found" ] || { echo "walkthrough: a curl without -w does not show its status: curl ${args[*]}" >&2; return 2; }
	command curl "${args[@]}" 2>>"$STATUS_LOG"
}
. "$1"
wait`

// pasteBlocks pastes every block of the clone's documents that is not
// skipped, in order, and answers how many ran.
func (w *walkthrough) pasteBlocks(ctx context.Context) (int, error) {
	blocks, err := documentBlocks(w.clone)
	if err != nil {
		return 0, err
	}
	if err := os.Mkdir(w.workFile("blocks"), 0o755); err != nil {
		return 0, err
	}
	ran := 0
	for _, b := range blocks {
		if reason, skip := skipReason(b.text); skip {
			logf("block %s: skipped (%s)", b.name, reason)
			continue
		}
		if err := w.paste(ctx, b); err != nil {
			return ran, err
		}
		ran++
	}
	if ran < 5 {
		return ran, fmt.Errorf("only %d blocks ran; the README's quick start and docs' checkout, venue, live map and hammer blocks should", ran)
	}
	return ran, nil
}

// paste runs one block with `bash -e -c` from the clone's directory, with
// HTTP_ADDR set to make run's address: it must end well, and its curls
// must get the statuses its comments say, in that order.
func (w *walkthrough) paste(ctx context.Context, b block) error {
	script := filepath.Join(w.workFile("blocks"), b.name+".sh")
	output := script + ".out"
	statusLog := w.workFile("statuses")
	if err := os.WriteFile(script, []byte(b.text), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(statusLog, nil, 0o644); err != nil {
		return err
	}
	out, err := os.Create(output)
	if err != nil {
		return err
	}
	env := environ(nil, "HTTP_ADDR="+w.addr, "STATUS_LOG="+statusLog, "MARK="+statusMark)
	cmd := command(ctx, w.clone, env, "bash", "-e", "-c", curlWrapper, "walkthrough", script)
	cmd.Stdout, cmd.Stderr = out, out
	runErr := cmd.Run()
	if err := out.Close(); err != nil {
		return err
	}
	if runErr != nil {
		return failure(ctx, []string{script, output, statusLog}, "block %s failed", b.name)
	}
	statuses, err := os.ReadFile(statusLog)
	if err != nil {
		return err
	}
	want, got := wantedStatuses(b.text), gotStatuses(string(statuses))
	if !slices.Equal(want, got) {
		return failure(ctx, []string{script, output}, "block %s: statuses [%s], its comments say [%s]", b.name, strings.Join(got, " "), strings.Join(want, " "))
	}
	logf("block %s: %d lines, statuses [%s] as its comments say", b.name, strings.Count(b.text, "\n"), strings.Join(got, " "))
	return nil
}
