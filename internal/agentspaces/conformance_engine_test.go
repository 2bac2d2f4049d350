package agentspaces

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/courier-agent/courier/internal/config"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/history"
	"github.com/courier-agent/courier/internal/policy"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/runner"
)

// The cases that need the engine, run completely: courier's runner
// carries out the operations as a run ('courier ops' does the same) with
// real files, a real shell with the case's bin/ programs first on PATH,
// the case's policy preset, the journal and the snapshots; a pause is
// answered with the case's approval.json and the run resumed.
func TestConformanceWithEngine(t *testing.T) {
	var cases []*conformanceCase
	for _, c := range loadConformance(t) {
		if c.needsEngine() && c.mode() != "shape" {
			cases = append(cases, c)
		}
	}
	if len(cases) < 25 {
		t.Fatalf("only %d cases need the engine", len(cases))
	}
	runConformance(t, cases, runWithEngine)
}

func presetPolicy(name string) (*policy.Policy, error) {
	cfg, err := Preset(name, policy.Config{})
	if err != nil {
		return nil, err
	}
	return policy.New(cfg)
}

// engineConfig is courier's runner on a fresh root, working on the
// case's workspace, with its bin/ programs first on the shell's PATH.
func engineConfig(t *testing.T, env conformanceEnv) runner.Config {
	paths := runner.DefaultPaths(t.TempDir())
	paths.Workspace = env.workspace
	if err := paths.Ensure(); err != nil {
		t.Fatal(err)
	}
	d := config.Defaults()
	return runner.Config{
		Paths:          paths,
		WorkspaceGiven: true,
		Limits:         runner.Limits{MaxReply: d.MaxReply, ListLimit: d.ListLimit, ReadLines: d.ReadLines},
		Commands: runner.Commands{
			Timeout:   d.CommandTimeout,
			MaxOutput: d.MaxOutput,
			Env:       []string{"PATH=" + env.bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + t.TempDir()},
		},
		FrontEnds: []frontend.FrontEnd{protocol.Tags{}, Chat{}},
		Presets:   presetPolicy,
	}
}

func runWithEngine(t *testing.T, c *conformanceCase, env conformanceEnv) caseResult {
	r := runner.New(engineConfig(t, env))
	ctx := context.Background()
	var res caseResult
	for i, turn := range c.turns() {
		cmds, err := parseInput(c, turn.input)
		if err != nil {
			t.Fatalf("%s: the input does not decode: %v", turn.name, err)
		}
		rep, err := r.StartRun(ctx, cmds, runner.RunOptions{Protocol: ChatName, Preset: c.policy(), Task: c.name,
			Name: "operations.json", Hash: history.Hash(string(turn.input))})
		if err != nil {
			t.Fatalf("%s: run: %v", turn.name, err)
		}
		got := runEvents(rep)
		res.turns = append(res.turns, got)
		data, ok := c.sections["approval.json"]
		if !ok || i > 0 {
			continue
		}
		if rep.Paused == nil {
			t.Fatalf("the run did not pause for approval:\n%s", mustJSON(t, got))
		}
		a, err := DecodeApproval(data)
		if err != nil {
			t.Fatal(err)
		}
		rep, err = r.ResumeRun(ctx, rep.ID, &runner.RunDecision{Operation: a.OperationID, Approved: a.Decision == Approved, Reason: a.Reason}, ApprovalID)
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		resumed := runEvents(rep)
		res.resumed = &resumed
	}
	return res
}

// runEvents is the events message of where a run stands.
func runEvents(rep runner.RunReport) EventsMessage {
	o := Outcome{Commands: rep.Commands, Results: rep.Results, From: rep.From, Answered: rep.Answered}
	if rep.Paused != nil {
		o.Paused = &Pause{Index: rep.Paused.Index, Reason: rep.Paused.Reason, Rule: rep.Paused.Rule}
	}
	return Events(rep.ID, o, time.Now())
}
