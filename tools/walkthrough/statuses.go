package main

import (
	"regexp"
	"strings"
)

// statusMark starts the line each curl of a block adds to the status log:
// the curl wrapper appends "%{stderr}<mark> %{http_code}\n" to the curl's
// own -w format.
const statusMark = "walkthrough-status"

// wantedStatus is a status a block's comment expects: "# 409 seat_taken",
// "# 201; S is the new schedule's id", three digits and no fourth.
var wantedStatus = regexp.MustCompile(`#[[:space:]]+([0-9]{3})(?:[^0-9]|$)`)

// gotStatus is a line of the status log that a curl wrapper wrote; the
// log holds the curls' other stderr too.
var gotStatus = regexp.MustCompile(`^` + regexp.QuoteMeta(statusMark) + ` ([0-9]{3})$`)

// wantedStatuses are the statuses a block's comments expect, in the order
// they are written. A block without curl (the hammer's) expects none.
func wantedStatuses(block string) []string {
	var want []string
	for line := range strings.Lines(block) {
		for _, m := range wantedStatus.FindAllStringSubmatch(strings.TrimSuffix(line, "\n"), -1) {
			want = append(want, m[1])
		}
	}
	return want
}

// gotStatuses are the statuses the curls of a block got, in the order they
// ended, read from the status log.
func gotStatuses(statusLog string) []string {
	var got []string
	for line := range strings.Lines(statusLog) {
		if m := gotStatus.FindStringSubmatch(strings.TrimSuffix(line, "\n")); m != nil {
			got = append(got, m[1])
		}
	}
	return got
}
