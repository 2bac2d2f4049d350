// Command fakellm plays the LLM behind courier's command backend in
// tests. It reads a courier request on stdin, checks it (a HEADER with the
// session and sequence number; from the second request on, the results of
// the previous turn) and prints the scripted reply for that sequence
// number. Installed under another name (claude, codex, ...) it also
// records the arguments and stdin it got, to pin a preset's invocation.
//
// Its behaviour is set by environment variables:
//
//	FAKELLM_SCRIPT   a folder holding one file per reply, named by sequence
//	                 number (1, 2.txt, 003.txt), or a file of replies
//	                 separated by lines "--- next reply ---". In a reply,
//	                 leading lines "expect: TEXT" name text the request must
//	                 hold, and {{SESSION}} and {{SEQUENCE}} are replaced by
//	                 the request's. Without a script, any stdin is accepted
//	                 and FAKELLM_REPLY (or "reply from NAME") is printed.
//	FAKELLM_RECORD   a folder: argv.json (the arguments) and stdin are
//	                 written there, numbered from the second call on
//	                 (argv.2.json, stdin.2).
//	FAKELLM_STATE    a folder for the call counter FAKELLM_FAIL needs.
//	FAKELLM_FAIL     fail (exit 7) the first N calls.
//	FAKELLM_PIDFILE  write the process id there.
//	FAKELLM_PARTIAL  printed on stdout before FAKELLM_PIDFILE is written
//	                 and FAKELLM_SLEEP begins; a literal \n in it stands
//	                 for a new line (scripts cannot set one).
//	FAKELLM_SLEEP    a duration to sleep before answering.
//	FAKELLM_STDERR   printed on stderr.
//	FAKELLM_ECHO_ENV names of variables whose "NAME=value" is printed on
//	                 stdout and stderr (comma-separated).
//	FAKELLM_EXIT     exit with this code after answering.
//
// Exit codes: 3 a request that fails a check, 4 no reply scripted, 5 a
// broken setup, 7 a scripted failure.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// resultsHeading shows the previous turn's results in a request.
const resultsHeading = "## Previous Command Results"

const separator = "--- next reply ---"

func main() {
	stdin, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(5, "read stdin: %v", err)
	}
	call := nextCall()
	record(stdin, call)
	if n, _ := strconv.Atoi(os.Getenv("FAKELLM_FAIL")); call <= n {
		fail(7, "scripted failure %d of %d", call, n)
	}
	// Before the pid file, which tests wait for.
	if text := os.Getenv("FAKELLM_PARTIAL"); text != "" {
		fmt.Print(strings.ReplaceAll(text, `\n`, "\n"))
		os.Stdout.Sync()
	}
	if path := os.Getenv("FAKELLM_PIDFILE"); path != "" {
		writeFile(path, strconv.Itoa(os.Getpid())+"\n")
	}
	if text := os.Getenv("FAKELLM_STDERR"); text != "" {
		fmt.Fprintln(os.Stderr, text)
	}
	for _, name := range strings.FieldsFunc(os.Getenv("FAKELLM_ECHO_ENV"), func(r rune) bool { return r == ',' || r == ' ' }) {
		line := name + "=" + os.Getenv(name)
		fmt.Println(line)
		fmt.Fprintln(os.Stderr, line)
	}
	if d, err := time.ParseDuration(os.Getenv("FAKELLM_SLEEP")); err == nil {
		time.Sleep(d)
	}
	fmt.Print(reply(string(stdin)))
	if code, err := strconv.Atoi(os.Getenv("FAKELLM_EXIT")); err == nil {
		os.Exit(code)
	}
}

func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "fakellm: "+format+"\n", args...)
	os.Exit(code)
}

// nextCall counts the calls in FAKELLM_STATE; without it each is the first.
func nextCall() int {
	dir := os.Getenv("FAKELLM_STATE")
	if dir == "" {
		return 1
	}
	path := filepath.Join(dir, "calls")
	data, _ := os.ReadFile(path)
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	n++
	writeFile(path, strconv.Itoa(n)+"\n")
	return n
}

func record(stdin []byte, call int) {
	dir := os.Getenv("FAKELLM_RECORD")
	if dir == "" {
		return
	}
	suffix := ""
	if call > 1 {
		suffix = "." + strconv.Itoa(call)
	}
	args, _ := json.Marshal(append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...))
	writeFile(filepath.Join(dir, "argv"+suffix+".json"), string(args)+"\n")
	writeFile(filepath.Join(dir, "stdin"+suffix), string(stdin))
}

func writeFile(path, text string) {
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		fail(5, "%v", err)
	}
}

var (
	sessionLine  = regexp.MustCompile(`(?m)^Session: *(\S+)`)
	sequenceLine = regexp.MustCompile(`(?m)^Sequence: *(\d+)`)
)

// reply returns the scripted reply to a request, after checking it.
func reply(request string) string {
	script := os.Getenv("FAKELLM_SCRIPT")
	if script == "" {
		if text := os.Getenv("FAKELLM_REPLY"); text != "" {
			return text
		}
		return "reply from " + filepath.Base(os.Args[0]) + "\n"
	}
	header, _, _ := strings.Cut(request, "=== PROTOCOL ===")
	if !strings.Contains(header, "=== HEADER ===") {
		fail(3, "the request has no HEADER")
	}
	session := sessionLine.FindStringSubmatch(header)
	seq := sequenceLine.FindStringSubmatch(header)
	if session == nil || seq == nil {
		fail(3, "the request's HEADER has no session or no sequence number")
	}
	n, _ := strconv.Atoi(seq[1])
	if n > 1 && !strings.Contains(request, resultsHeading) {
		fail(3, "request %d does not show the previous turn's results (%q)", n, resultsHeading)
	}
	text := scripted(script, n)
	for {
		line, rest, _ := strings.Cut(text, "\n")
		want, ok := strings.CutPrefix(line, "expect: ")
		if !ok {
			break
		}
		if !strings.Contains(request, want) {
			fail(3, "request %d does not hold %q", n, want)
		}
		text = rest
	}
	return strings.NewReplacer("{{SESSION}}", session[1], "{{SEQUENCE}}", seq[1]).Replace(text)
}

func scripted(script string, n int) string {
	if fi, err := os.Stat(script); err != nil || !fi.IsDir() {
		data, err := os.ReadFile(script)
		if err != nil {
			fail(5, "FAKELLM_SCRIPT: %v", err)
		}
		replies := strings.Split(string(data), "\n"+separator+"\n")
		if n < 1 || n > len(replies) {
			fail(4, "no reply scripted for sequence %d (the script has %d)", n, len(replies))
		}
		return strings.TrimPrefix(replies[n-1], "\n")
	}
	for _, name := range []string{strconv.Itoa(n), strconv.Itoa(n) + ".txt", fmt.Sprintf("%03d.txt", n)} {
		if data, err := os.ReadFile(filepath.Join(script, name)); err == nil {
			return string(data)
		}
	}
	fail(4, "no reply scripted for sequence %d in %s", n, script)
	return ""
}
