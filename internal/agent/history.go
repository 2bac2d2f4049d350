package agent

import (
	"fmt"
	"github.com/courier-agent/courier/internal/human"
	"os"
	"path/filepath"
	"slices"
)

// history returns the request and reply of each completed earlier run of
// the session, from the run folders (so it survives a restart), newest
// kept first within budget tokens. A failed run's request is sent again
// anyway.
func history(runCtx *RunContext, budget int) ([]message, error) {
	session := runCtx.Environment[EnvTaskFolder]
	if session == "" || budget <= 0 {
		return nil, nil
	}
	r := Runs{SessionDir: session}
	ids, err := r.ids()
	if err != nil {
		return nil, err
	}
	var kept [][2]message // newest first
	used := 0
	for _, id := range slices.Backward(ids) {
		if id >= runCtx.RunID {
			continue // this run, or one after it
		}
		dir := filepath.Join(r.Dir(), id)
		info, err := readInfo(dir)
		if err != nil || info.Status != StatusCompleted {
			continue
		}
		prompt, err := os.ReadFile(filepath.Join(dir, PromptFile))
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		reply, err := os.ReadFile(filepath.Join(dir, StdoutFile))
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		cost := human.Tokens(string(prompt)) + human.Tokens(string(reply))
		if used+cost > budget {
			break
		}
		used += cost
		kept = append(kept, [2]message{{Role: "user", Content: string(prompt)}, {Role: "assistant", Content: string(reply)}})
	}
	out := make([]message, 0, 2*len(kept))
	for _, pair := range slices.Backward(kept) {
		out = append(out, pair[0], pair[1])
	}
	return out, nil
}
