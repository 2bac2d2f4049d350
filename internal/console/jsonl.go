package console

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/courier-agent/courier/internal/runner"
)

// JSON is the reporter for programs: one JSON object per line and event,
// its kind in "event", keys in camelCase.
type JSON struct {
	mu sync.Mutex
	w  io.Writer
}

// NewJSON returns a JSON-lines reporter writing to w.
func NewJSON(w io.Writer) *JSON { return &JSON{w: w} }

// The methods below implement runner.Reporter.

func (j *JSON) SessionStarted(e runner.SessionStarted) {
	j.write("sessionStarted", "session", e.Session, "task", e.Task)
}

func (j *JSON) RequestWritten(e runner.RequestWritten) {
	j.write("requestWritten", "session", e.Session, "sequence", e.Sequence, "path", e.Path, "bytes", e.Size,
		"tokens", e.Tokens, "rewritten,omitempty", e.Rewritten, "damaged,omitempty", e.Damaged)
}

func (j *JSON) WaitingForReply(e runner.WaitingForReply) {
	j.write("waitingForReply", "session", e.Session, "sequence", e.Sequence, "from", e.From)
}

func (j *JSON) ReplyTaken(e runner.ReplyTaken) {
	j.write("replyTaken", "session", e.Session, "sequence", e.Sequence, "reply", e.Name)
}

func (j *JSON) ReplySkipped(e runner.ReplySkipped) {
	j.write("replySkipped", "reply", e.Name, "session,omitempty", e.Session, "why,omitempty", e.Why)
}

func (j *JSON) ReplySetAside(e runner.ReplySetAside) {
	j.write("replySetAside", "error", e.Err.Error(), "movedTo,omitempty", e.MovedTo)
}

func (j *JSON) ReplyRefused(e runner.ReplyRefused) {
	j.write("replyRefused", "reply", e.Name, "reason", e.Reason, "movedTo,omitempty", e.MovedTo, "duplicate", e.Duplicate)
}

func (j *JSON) TurnResumed(e runner.TurnResumed) {
	j.write("turnResumed", "session", e.Session, "sequence", e.Sequence, "reply", e.Reply, "afterApproval", e.AfterApproval)
}

func (j *JSON) CommandStarted(e runner.CommandStarted) {
	j.write("commandStarted", "index", e.Index, "command", e.Command)
}

func (j *JSON) CommandFinished(e runner.CommandFinished) {
	j.write("commandFinished", "index", e.Index, "command", e.Command, "result", e.Result)
}

func (j *JSON) ApprovalNeeded(e runner.ApprovalNeeded) {
	j.write("approvalNeeded", "session", e.Session, "sequence", e.Sequence, "index", e.Index, "command", e.Command, "reason", e.Reason)
}

func (j *JSON) ApprovalDecided(e runner.ApprovalDecided) {
	j.write("approvalDecided", "session", e.Session, "command", e.Command, "approved", e.Approved,
		"all,omitempty", e.All, "reason,omitempty", e.Reason, "elsewhere,omitempty", e.Elsewhere)
}

func (j *JSON) TurnEnded(e runner.TurnEnded) {
	failed := 0
	for _, r := range e.Results {
		if !r.Success() {
			failed++
		}
	}
	j.write("turnEnded", "session", e.Session, "sequence", e.Sequence, "commands", len(e.Results), "failed", failed)
	if e.Complete {
		j.write("sessionComplete", "session", e.Session, "summary", e.Summary)
	}
}

func (j *JSON) TurnUndone(e runner.TurnUndone) {
	r := e.Report
	j.write("turnUndone", "session", e.Session, "sequence", r.Sequence, "restored", r.Restored, "removed", r.Removed,
		"notUndone,omitempty", r.NotUndone, "kept,omitempty", r.Kept, "resumed,omitempty", r.Resumed)
}

func (j *JSON) AgentRun(e runner.AgentRun) {
	errText := ""
	if e.Err != nil {
		errText = e.Err.Error()
	}
	j.write("agentRun", "kind", string(e.Kind), "runId", e.RunID, "agent", e.Agent, "model,omitempty", e.Model,
		"elapsedMs", e.Elapsed.Milliseconds(), "bytes", e.Bytes, "tokens,omitempty", e.Tokens, "attempt,omitempty", e.Attempt,
		"waitMs,omitempty", e.Wait.Milliseconds(), "status,omitempty", e.Status, "error,omitempty", errText)
}

func (j *JSON) Warning(e runner.Warning) {
	j.write("warning", "message", e.Message, "hint,omitempty", e.Hint)
}

// write puts an event on a line: its name, then the keys and values of
// kv in order, as encoding/json would encode a struct of them (a key
// ending in ",omitempty" is left out when its value is empty).
func (j *JSON) write(event string, kv ...any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteString(`{"event":"` + event + `"`)
	for i := 0; i < len(kv); i += 2 {
		key, omit := strings.CutSuffix(kv[i].(string), ",omitempty")
		if v := reflect.ValueOf(kv[i+1]); omit && (v.IsZero() || (v.Kind() == reflect.Slice || v.Kind() == reflect.Map) && v.Len() == 0) {
			continue
		}
		b.WriteString(`,"` + key + `":`)
		if enc.Encode(kv[i+1]) != nil {
			return
		}
		b.Truncate(b.Len() - 1) // the encoder's newline
	}
	b.WriteString("}\n")
	j.mu.Lock()
	defer j.mu.Unlock()
	_, _ = j.w.Write(b.Bytes()) // a closed pipe only ends the report
}
