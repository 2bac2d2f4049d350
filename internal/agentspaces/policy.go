package agentspaces

import (
	"fmt"
	"slices"

	"github.com/courier-agent/courier/internal/policy"
)

// The policy presets a run may ask for.
const (
	PresetStandard    = "standard"
	PresetPermissive  = "permissive"
	PresetRestrictive = "restrictive"
)

// Preset returns the shell policy of a preset built over own, the
// person's [policy] table: the preset's rules join the person's lists (in
// front of the built-in rules) and no_defaults is kept. The most severe
// matching rule decides, so the person's deny and ask rules keep their
// force under every preset, and their allow rules lift built-in rules,
// never one the preset adds. The protocol's presets judge substrings;
// courier's policy judges every program a parsed command would start:
//
//   - standard: the person's policy as it is, as without a preset.
//   - permissive: deletes, discards and recursive permission changes run
//     without approval: their harm stays in the workspace, which the
//     sandbox confines writes to and undo restores. What reaches beyond
//     it (git push, publishing, kill, mount, crontab, downloads) still asks.
//   - restrictive: every command the built-in rules ask about is denied
//     (those they deny stay denied, even with no_defaults), and network
//     clients and package installs ask.
func Preset(name string, own policy.Config) (policy.Config, error) {
	var p policy.Config
	switch name {
	case PresetStandard, "":
	case PresetPermissive:
		// The built-in rules whose harm is confined to the workspace.
		p.Allow = noted("permissive preset: the change stays in the workspace",
			"rm -r", "rm -R", "rm -f", "rm --recursive", "rm --force", "find -delete", "shred",
			"git reset --hard", "git checkout .", "git checkout * .", "git checkout -f", "git checkout --force",
			"git restore .", "git restore * .", "git switch -f", "git switch --force", "git switch --discard-changes",
			"git clean -f", "git clean --force", "git stash drop", "git stash clear",
			"git branch -D", "git branch -d -f", "git branch --delete --force",
			"chmod -R", "chmod --recursive", "chown -R", "chown --recursive", "chgrp -R", "chgrp --recursive")
	case PresetRestrictive:
		p.Deny = policy.Default().Ask
		if own.NoDefaults {
			p.Deny = append(p.Deny, policy.Default().Deny...)
		}
		p.Ask = slices.Concat(noted("restrictive preset: reaches the network",
			"curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "socat", "telnet", "ftp",
			"git clone", "git fetch", "git pull", "git ls-remote", "git submodule"),
			noted("restrictive preset: installs packages",
				"npm install", "npm i", "npm ci", "npm add", "pnpm install", "pnpm i", "pnpm add",
				"yarn install", "yarn add", "bun install", "bun add", "pip install", "pip3 install", "uv pip", "uv add",
				"poetry add", "poetry install", "gem install", "cargo install", "cargo add", "go install", "go get",
				"apt", "apt-get", "dnf", "yum", "brew"))
	default:
		return policy.Config{}, fmt.Errorf("unknown policy preset %q: use standard, permissive or restrictive", name)
	}
	return policy.Config{
		Deny:       slices.Concat(own.Deny, p.Deny),
		Ask:        slices.Concat(own.Ask, p.Ask),
		Allow:      slices.Concat(own.Allow, p.Allow),
		NoDefaults: own.NoDefaults,
	}, nil
}

// noted returns the rules, each with the note that says why it is there.
func noted(note string, rules ...string) []string {
	for i := range rules {
		rules[i] += " # " + note
	}
	return rules
}
