package agent

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// workFolder makes the folder an agent program runs in: new for each run,
// empty, private, under the person's cache folder
// (~/.cache/courier/agents/run-*), removed after the run. Coding CLIs read
// settings that run programs (.claude/settings.json, .gemini/.env,
// .codex/config.toml...) from their working folder and those above it, and
// a reply can write all of these into the workspace, so the agent runs
// neither there nor in its run folder, which may sit inside the project.
// Not in /tmp either: every user can write /tmp/.gemini/.env. No reply
// writes here: the sandbox lets commands write only in the workspace,
// courier's tool caches and temporary folders of their own.
func workFolder(workspace string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", permanentError{fmt.Errorf("no folder for the agent to run in: %w", err)}
	}
	base := filepath.Join(cache, "courier", "agents")
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("create the agents' folder: %w", err)
	}
	dir, err := os.MkdirTemp(base, "run-")
	if err != nil {
		return "", fmt.Errorf("create the agent's folder: %w", err)
	}
	if ws, err := os.Stat(workspace); err == nil && within(dir, ws) {
		os.Remove(dir)
		return "", permanentError{setupError(fmt.Errorf("the agents' folder %s is inside the workspace, where a reply could plant settings the agent program would act on", base),
			"set XDG_CACHE_HOME to a folder outside the workspace")}
	}
	return dir, nil
}

// hideWorkspace returns what to set over environ so that no variable
// names a path in the workspace: such a path is taken out of its
// variable's list (a PATH entry, where a reply could put a program named
// claude) or leaves the variable empty (PWD, VIRTUAL_ENV,
// COURIER_WORKSPACE).
func hideWorkspace(environ []string, workspace string) map[string]string {
	out := map[string]string{}
	ws, err := os.Stat(workspace)
	if err != nil {
		return out
	}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		parts := filepath.SplitList(value)
		kept := slices.DeleteFunc(slices.Clone(parts), func(p string) bool { return filepath.IsAbs(p) && within(p, ws) })
		if len(kept) < len(parts) {
			out[name] = strings.Join(kept, string(os.PathListSeparator))
		}
	}
	return out
}

// within reports whether path is dir or lies inside it: some folder on
// the way up from it is dir itself (a symlink on the way counts as the
// folder it names).
func within(path string, dir fs.FileInfo) bool {
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if info, err := os.Stat(p); err == nil && os.SameFile(info, dir) {
			return true
		}
		if filepath.Dir(p) == p {
			return false
		}
	}
}
