package console

import (
	"encoding/json"
	"io"
	"sync"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/runner"
)

// JSON is the reporter for programs: one JSON object per line and event,
// its kind in "event", keys in camelCase.
type JSON struct {
	mu  sync.Mutex
	enc *json.Encoder
}

// NewJSON returns a JSON-lines reporter writing to w.
func NewJSON(w io.Writer) *JSON {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &JSON{enc: enc}
}

// turn begins the events of one turn of a session.
type turn struct {
	Event    string `json:"event"`
	Session  string `json:"session"`
	Sequence int    `json:"sequence"`
}

// The methods below implement runner.Reporter.

func (j *JSON) SessionStarted(e runner.SessionStarted) {
	j.write(struct {
		Event   string `json:"event"`
		Session string `json:"session"`
		Task    string `json:"task"`
	}{"sessionStarted", e.Session, e.Task})
}

func (j *JSON) RequestWritten(e runner.RequestWritten) {
	j.write(struct {
		turn
		Path      string `json:"path"`
		Bytes     int64  `json:"bytes"`
		Tokens    int    `json:"tokens"`
		Rewritten bool   `json:"rewritten,omitempty"`
		Damaged   bool   `json:"damaged,omitempty"`
	}{turn{"requestWritten", e.Session, e.Sequence}, e.Path, e.Size, e.TokenCount(), e.Rewritten, e.Damaged})
}

func (j *JSON) WaitingForReply(e runner.WaitingForReply) {
	j.write(struct {
		turn
		From string `json:"from"`
	}{turn{"waitingForReply", e.Session, e.Sequence}, e.From})
}

func (j *JSON) ReplyTaken(e runner.ReplyTaken) {
	j.write(struct {
		turn
		Reply string `json:"reply"`
	}{turn{"replyTaken", e.Session, e.Sequence}, e.Name})
}

func (j *JSON) ReplySkipped(e runner.ReplySkipped) {
	j.write(struct {
		Event   string `json:"event"`
		Reply   string `json:"reply"`
		Session string `json:"session,omitempty"`
		Why     string `json:"why,omitempty"`
	}{"replySkipped", e.Name, e.Session, e.Why})
}

func (j *JSON) ReplySetAside(e runner.ReplySetAside) {
	j.write(struct {
		Event   string `json:"event"`
		Error   string `json:"error"`
		MovedTo string `json:"movedTo,omitempty"`
	}{"replySetAside", e.Err.Error(), e.MovedTo})
}

func (j *JSON) ReplyRefused(e runner.ReplyRefused) {
	j.write(struct {
		Event     string `json:"event"`
		Reply     string `json:"reply"`
		Reason    string `json:"reason"`
		MovedTo   string `json:"movedTo,omitempty"`
		Duplicate bool   `json:"duplicate"`
	}{"replyRefused", e.Name, e.Reason, e.MovedTo, e.Duplicate})
}

func (j *JSON) TurnResumed(e runner.TurnResumed) {
	j.write(struct {
		turn
		Reply         string `json:"reply"`
		AfterApproval bool   `json:"afterApproval"`
	}{turn{"turnResumed", e.Session, e.Sequence}, e.Reply, e.AfterApproval})
}

func (j *JSON) CommandStarted(e runner.CommandStarted) {
	j.write(struct {
		Event   string          `json:"event"`
		Index   int             `json:"index"`
		Command command.Command `json:"command"`
	}{"commandStarted", e.Index, e.Command})
}

func (j *JSON) CommandFinished(e runner.CommandFinished) {
	j.write(struct {
		Event   string          `json:"event"`
		Index   int             `json:"index"`
		Command command.Command `json:"command"`
		Result  command.Result  `json:"result"`
	}{"commandFinished", e.Index, e.Command, e.Result})
}

func (j *JSON) ApprovalNeeded(e runner.ApprovalNeeded) {
	j.write(struct {
		turn
		Index   int    `json:"index"`
		Command string `json:"command"`
		Reason  string `json:"reason"`
	}{turn{"approvalNeeded", e.Session, e.Sequence}, e.Index, e.Command, e.Reason})
}

func (j *JSON) ApprovalDecided(e runner.ApprovalDecided) {
	j.write(struct {
		Event     string `json:"event"`
		Session   string `json:"session"`
		Command   string `json:"command"`
		Approved  bool   `json:"approved"`
		All       bool   `json:"all,omitempty"`
		Reason    string `json:"reason,omitempty"`
		Elsewhere bool   `json:"elsewhere,omitempty"`
	}{"approvalDecided", e.Session, e.Command, e.Approved, e.All, e.Reason, e.Elsewhere})
}

func (j *JSON) TurnEnded(e runner.TurnEnded) {
	failed := 0
	for _, r := range e.Results {
		if !r.Success() {
			failed++
		}
	}
	j.write(struct {
		turn
		Commands int `json:"commands"`
		Failed   int `json:"failed"`
	}{turn{"turnEnded", e.Session, e.Sequence}, len(e.Results), failed})
	if e.Complete {
		j.write(struct {
			Event   string `json:"event"`
			Session string `json:"session"`
			Summary string `json:"summary"`
		}{"sessionComplete", e.Session, e.Summary})
	}
}

func (j *JSON) TurnUndone(e runner.TurnUndone) {
	j.write(struct {
		turn
		Restored  []string          `json:"restored"`
		Removed   []string          `json:"removed"`
		NotUndone []string          `json:"notUndone,omitempty"`
		Kept      map[string]string `json:"kept,omitempty"`
		Resumed   bool              `json:"resumed,omitempty"`
	}{turn{"turnUndone", e.Session, e.Report.Sequence}, e.Report.Restored, e.Report.Removed, e.Report.NotUndone, e.Report.Kept, e.Report.Resumed})
}

func (j *JSON) AgentRun(e runner.AgentRun) {
	errText := ""
	if e.Err != nil {
		errText = e.Err.Error()
	}
	j.write(struct {
		Event     string `json:"event"`
		Kind      string `json:"kind"`
		RunID     string `json:"runId"`
		Agent     string `json:"agent"`
		Model     string `json:"model,omitempty"`
		ElapsedMS int64  `json:"elapsedMs"`
		Bytes     int64  `json:"bytes"`
		Tokens    int    `json:"tokens,omitempty"`
		Attempt   int    `json:"attempt,omitempty"`
		WaitMS    int64  `json:"waitMs,omitempty"`
		Status    string `json:"status,omitempty"`
		Error     string `json:"error,omitempty"`
	}{"agentRun", string(e.Kind), e.RunID, e.Agent, e.Model, e.Elapsed.Milliseconds(), e.Bytes, e.Tokens, e.Attempt, e.Wait.Milliseconds(), e.Status, errText})
}

func (j *JSON) Warning(e runner.Warning) {
	j.write(struct {
		Event   string `json:"event"`
		Message string `json:"message"`
		Hint    string `json:"hint,omitempty"`
	}{"warning", e.Message, e.Hint})
}

func (j *JSON) write(v any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	_ = j.enc.Encode(v) // a closed pipe only ends the report
}
