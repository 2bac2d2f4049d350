package inbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/runner"
)

func writeReply(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A reply file named on the command line is read once: the reply Route
// read to find its session is the one applied, parsed again only for a
// session that speaks another protocol.
func TestFileIsReadOnce(t *testing.T) {
	dir := t.TempDir()
	p := writeReply(t, dir, "reply.txt", "Session: 0badc0de\n[RUN_COMMAND]\necho first\n[/RUN_COMMAND]\n")
	f := &File{Path: p, Inbox: dir}
	id, err := f.Route([]frontend.FrontEnd{protocol.Tags{}}, 0)
	if err != nil || id != "0badc0de" {
		t.Fatalf("Route = %q, %v", id, err)
	}
	writeReply(t, dir, "reply.txt", "[RUN_COMMAND]\necho second\n[/RUN_COMMAND]\n")
	rep, err := f.Next(context.Background(), runner.Request{Session: id, FrontEnd: protocol.Tags{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Parsed.Commands) != 1 || rep.Parsed.Commands[0].Command != "echo first" {
		t.Errorf("Next gave %+v, want the reply Route read", rep.Parsed.Commands)
	}

	g := &File{Path: writeReply(t, dir, "ops.md", "```json\n{\"operations\": [{\"type\": \"shell\", \"command\": \"ls\"}]}\n```\n"), Inbox: dir}
	if _, err := g.Route([]frontend.FrontEnd{protocol.Tags{}}, 0); err != nil {
		t.Fatal(err)
	}
	rep, err = g.Next(context.Background(), runner.Request{FrontEnd: agentspaces.Chat{}})
	if err != nil || len(rep.Parsed.Commands) != 1 || rep.Parsed.Commands[0].Command != "ls" {
		t.Errorf("for a JSON session Next gave %+v, %v", rep.Parsed.Commands, err)
	}
}

// The replies the queue routes are given to their session as they are
// when taken: a reply changed since it was routed, as changed.
func TestQueueGivesRepliesAsTheyAre(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Minute)
	for _, name := range []string{"a.txt", "b.txt"} {
		p := writeReply(t, dir, name, "Session: 0badc0de\n[RUN_COMMAND]\necho "+name+"\n[/RUN_COMMAND]\n")
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		old = old.Add(time.Second)
	}
	fe := protocol.Tags{}
	q := Queue{Dir: dir, MaxReply: 1 << 20}
	ids, err := q.Sessions([]frontend.FrontEnd{fe}, 1<<20)
	if err != nil || len(ids) != 1 || ids[0] != "0badc0de" {
		t.Fatalf("Sessions = %v, %v", ids, err)
	}
	// b.txt changes after it was routed: it is read again.
	writeReply(t, dir, "b.txt", "Session: 0badc0de\n[RUN_COMMAND]\necho changed\n[/RUN_COMMAND]\n")
	src := q.Source("0badc0de", false)
	req := runner.Request{Session: "0badc0de", FrontEnd: fe, MaxReply: 1 << 20}
	var got []string
	for {
		rep, err := src.Next(context.Background(), req)
		if err != nil {
			break
		}
		got = append(got, rep.Parsed.Commands[0].Command)
	}
	if strings.Join(got, ",") != "echo a.txt,echo changed" {
		t.Errorf("the session was given %v", got)
	}
}

// Settling checks that the file still holds the reply by reading no more
// of it than the largest reply: a file grown past that is left alone.
func TestSettleReadsWithinTheLimit(t *testing.T) {
	dir := t.TempDir()
	text := "[DONE]\nok\n[/DONE]\n"
	hash := history.Hash(text)
	writeReply(t, dir, "fits.txt", text)
	writeReply(t, dir, "crlf.txt", strings.ReplaceAll(text, "\n", "\r\n"))
	q := Queue{Dir: dir, MaxReply: int64(len(text))}
	src := q.Source("", true)
	if moved, err := src.Settle("fits.txt", hash, runner.Applied); err != nil || moved == "" {
		t.Errorf("the reply within the limit was not moved: %q, %v", moved, err)
	}
	if moved, err := src.Settle("crlf.txt", hash, runner.Applied); err != nil || moved != "" {
		t.Errorf("a file larger than the limit was moved: %q, %v", moved, err)
	}
}
