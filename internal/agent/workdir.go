package agent

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// workFolder makes the empty, private folder an agent program runs in,
// ~/.cache/courier/agents/run-*, removed after the run. Coding CLIs run
// programs their settings name (.claude/settings.json, .gemini/.env...),
// read from their folder and those above, which a reply can write in the
// workspace; every user can write /tmp/.gemini/.env; the sandbox lets no
// reply write here.
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
// names a path in the workspace (a PATH entry where a reply could put a
// program named claude, PWD, VIRTUAL_ENV): such paths are taken out of
// their variable's list.
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

// within reports whether path is dir or inside it, symlinks followed.
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
