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
		p.Allow = slices.Clone(permissiveAllow)
	case PresetRestrictive:
		p.Deny = policy.Default().Ask
		if own.NoDefaults {
			p.Deny = append(p.Deny, policy.Default().Deny...)
		}
		p.Ask = slices.Clone(restrictiveAsk)
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

const (
	inWorkspace = " # permissive preset: the change stays in the workspace"
	network     = " # restrictive preset: reaches the network"
	install     = " # restrictive preset: installs packages"
)

// permissiveAllow lifts the approval of the built-in rules whose harm is
// confined to the workspace.
var permissiveAllow = []string{
	"rm -r" + inWorkspace, "rm -R" + inWorkspace, "rm -f" + inWorkspace,
	"rm --recursive" + inWorkspace, "rm --force" + inWorkspace,
	"find -delete" + inWorkspace, "shred" + inWorkspace,
	"git reset --hard" + inWorkspace, "git checkout ." + inWorkspace, "git checkout * ." + inWorkspace,
	"git checkout -f" + inWorkspace, "git checkout --force" + inWorkspace,
	"git restore ." + inWorkspace, "git restore * ." + inWorkspace,
	"git switch -f" + inWorkspace, "git switch --force" + inWorkspace, "git switch --discard-changes" + inWorkspace,
	"git clean -f" + inWorkspace, "git clean --force" + inWorkspace,
	"git stash drop" + inWorkspace, "git stash clear" + inWorkspace,
	"git branch -D" + inWorkspace, "git branch -d -f" + inWorkspace, "git branch --delete --force" + inWorkspace,
	"chmod -R" + inWorkspace, "chmod --recursive" + inWorkspace,
	"chown -R" + inWorkspace, "chown --recursive" + inWorkspace,
	"chgrp -R" + inWorkspace, "chgrp --recursive" + inWorkspace,
}

// restrictiveAsk adds approval for reaching the network and installing
// packages.
var restrictiveAsk = []string{
	"curl" + network, "wget" + network, "ssh" + network, "scp" + network, "sftp" + network,
	"rsync" + network, "nc" + network, "ncat" + network, "netcat" + network, "socat" + network,
	"telnet" + network, "ftp" + network,
	"git clone" + network, "git fetch" + network, "git pull" + network, "git ls-remote" + network,
	"git submodule" + network,
	"npm install" + install, "npm i" + install, "npm ci" + install, "npm add" + install,
	"pnpm install" + install, "pnpm i" + install, "pnpm add" + install,
	"yarn install" + install, "yarn add" + install, "bun install" + install, "bun add" + install,
	"pip install" + install, "pip3 install" + install, "uv pip" + install, "uv add" + install,
	"poetry add" + install, "poetry install" + install, "gem install" + install,
	"cargo install" + install, "cargo add" + install, "go install" + install, "go get" + install,
	"apt" + install, "apt-get" + install, "dnf" + install, "yum" + install, "brew" + install,
}
