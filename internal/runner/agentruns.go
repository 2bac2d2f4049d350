package runner

import (
	"fmt"
	"strings"

	"github.com/courier-agent/courier/internal/agent"
	"github.com/courier-agent/courier/internal/human"
)

// replyAgent is the agent whose run gave the reply named name, "" when
// the reply came from no run (a person saved it).
func (s *Session) replyAgent(name string) string {
	id, ok := agent.RunOfReply(name)
	if !ok {
		return ""
	}
	a, _ := agent.Runs{SessionDir: s.Folder()}.AgentOf(id)
	return a
}

// closeAgentRuns marks failed the agent runs a stopped courier left open,
// so no partial reply is applied, and stops their programs. A failure is
// only a warning: no reply is taken from a run not marked completed.
func (s *Session) closeAgentRuns() {
	closed, err := agent.Runs{SessionDir: s.Folder()}.Recover()
	if len(closed) > 0 {
		s.r.cfg.Reporter.Warning(Warning{Message: fmt.Sprintf("%s left running by an earlier courier marked failed: %s",
			human.Count(len(closed), "agent run", ""), strings.Join(closed, ", "))})
	}
	if err != nil {
		s.r.cfg.Reporter.Warning(Warning{Message: fmt.Sprintf("session %s: closing the agent runs an earlier courier left open: %v", s.ID(), err)})
	}
}
