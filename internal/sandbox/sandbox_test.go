package sandbox

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestCommandRoundTrip(t *testing.T) {
	shell := []string{"/bin/sh", "-c", "echo --rw -- x"}
	tests := []Options{
		{Exe: "/usr/bin/courier"},
		{Exe: "/c", Writable: []string{"/work/ws", "/other dir"}, NoNetwork: true, Strict: true},
		{Exe: "/c", Writable: []string{"--strict"}},
	}
	for _, opts := range tests {
		argv := Command(opts, shell)
		if argv[0] != opts.Exe || argv[1] != ExecArg {
			t.Fatalf("argv %q does not start with the executable and %s", argv, ExecArg)
		}
		got, gotShell, err := parseArgs(argv[2:])
		if err != nil {
			t.Fatalf("parse %q: %v", argv, err)
		}
		opts.Exe = ""
		if !reflect.DeepEqual(got, opts) || !reflect.DeepEqual(gotShell, shell) {
			t.Errorf("round trip of %q gave %+v %q", argv, got, gotShell)
		}
	}
}

func TestMainRejectsBadArguments(t *testing.T) {
	tests := [][]string{
		nil,
		{"--rw"},
		{"--bogus", "--", "/bin/true"},
		{"--rw", "/tmp"},
		{"--"},
	}
	for _, args := range tests {
		var stderr bytes.Buffer
		code := Main(args, &stderr)
		if code != ExitFailure || !strings.HasPrefix(stderr.String(), "courier: error: sandbox: ") {
			t.Errorf("Main(%q) = %d with %q, want %d and a courier error line", args, code, stderr.String(), ExitFailure)
		}
	}
}
