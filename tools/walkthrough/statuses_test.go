package main

import (
	"slices"
	"testing"
)

func TestWantedStatuses(t *testing.T) {
	tests := []struct {
		name  string
		block string
		want  []string
	}{
		{"no comment", "make hammer ARGS='-duration 2s'\n", nil},
		{"one per curl, in order", "curl … # 200, alice's\ncurl …   # 409 seat_taken\n", []string{"200", "409"}},
		{"a status at the end of its line", "curl … # 201\n", []string{"201"}},
		{"a semicolon after it", "S=$(curl …)   # 201; S is the new schedule's id\n", []string{"201"}},
		{"a tab before it", "curl …\t#\t204\n", []string{"204"}},
		{"two on a line", "curl … & curl … # 200 # 409\n", []string{"200", "409"}},
		{"no space after #", "curl … #200\n", nil},
		{"four digits are not a status", "sleep 1 # 2000 ms\n", nil},
		{"two digits are not a status", "echo # 42\n", nil},
		{"a # inside a word is no comment, it counts the same", "echo a# 503\n", []string{"503"}},
		{"the comment's text names other numbers", "curl … # 429 after 100 requests\n", []string{"429"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wantedStatuses(tt.block); !slices.Equal(got, tt.want) {
				t.Errorf("wantedStatuses(%q) = %q, want %q", tt.block, got, tt.want)
			}
		})
	}
}

func TestGotStatuses(t *testing.T) {
	tests := []struct {
		name string
		log  string
		want []string
	}{
		{"empty", "", nil},
		{"marked lines, in order", "walkthrough-status 201\nwalkthrough-status 409\n", []string{"201", "409"}},
		{
			"a block's own stderr -w and curl's errors are not statuses",
			"201\nwalkthrough-status 201\ncurl: (7) Failed to connect\nwalkthrough-status 000\n",
			[]string{"201", "000"},
		},
		{"the last line without its newline", "walkthrough-status 200", []string{"200"}},
		{"only whole lines", "x walkthrough-status 200\nwalkthrough-status 2000\nwalkthrough-status 20\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gotStatuses(tt.log); !slices.Equal(got, tt.want) {
				t.Errorf("gotStatuses(%q) = %q, want %q", tt.log, got, tt.want)
			}
		})
	}
}
