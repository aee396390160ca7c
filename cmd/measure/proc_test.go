package main

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	// A command name with a space and a parenthesis of its own.
	line := "4242 (post gres: x)) S 17 4242 4242 0 -1 4194560 900 0 0 0 123 45 6 7 20 0 1 0 100 1000 200"
	s, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{ppid: 17, utime: 123, stime: 45, cutime: 6, cstime: 7}
	if s != want {
		t.Errorf("parseStat = %+v, want %+v", s, want)
	}
	if _, err := parseStat([]byte("4242 (short) S 1 2")); err == nil {
		t.Error("a cut-short line parsed")
	}
}

func TestTreeTicksOfThisProcess(t *testing.T) {
	own, err := cpuTicks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	tree, err := treeTicks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if tree < own {
		t.Errorf("treeTicks %d < cpuTicks %d: the tree holds the process", tree, own)
	}
}

func TestStatus(t *testing.T) {
	text := "Name:\tapi\nVmHWM:\t   69204 kB\nVmRSS:\t   51200 kB\n"
	if got := statusValue(text, "VmHWM"); got != "69204 kB" {
		t.Errorf("VmHWM = %q", got)
	}
	if got := mebibytes(statusValue(text, "VmRSS")); got != "50.0 MiB" {
		t.Errorf("VmRSS = %q", got)
	}
	if got := statusValue(text, "VmSwap"); got != "" {
		t.Errorf("VmSwap = %q, want none", got)
	}
	if status(os.Getpid(), "VmHWM") == "" {
		t.Error("no VmHWM for this process")
	}
}
