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

// Preset returns the shell policy rules of a preset, in courier's own rule
// syntax, to be added to the configured rules (policy.Config's lists, put
// in front of courier's built-in rules). Where the configured rules and a
// preset's both match a program, the most severe decides, so a person's
// own deny and ask rules keep their force under every preset.
//
// The protocol's presets judge commands by substrings; courier does not:
// its policy parses the shell command and judges every program it would
// start. The presets map onto that policy so:
//
//   - standard: courier's built-in rules, unchanged. Privilege escalation
//     and commands that act on the whole machine (shutdown, disks, kernel
//     modules, user accounts, device writes) are denied; destructive or
//     outward commands (recursive or forced rm, whole-tree git discards,
//     git push, publishing, kill, mount, crontab, code downloaded and run,
//     computed program names, unparseable text) need approval.
//   - permissive: as standard, but deletes, discards and recursive
//     permission changes run without approval. Their harm stays in the
//     workspace, which the sandbox confines writes to and undo restores.
//     Everything that reaches beyond it (git push, publishing, kill,
//     mount, crontab, downloads) still needs approval.
//   - restrictive: every command that standard asks about is denied, and
//     network clients and package installs need approval.
func Preset(name string) (policy.Config, error) {
	switch name {
	case PresetStandard, "":
		return policy.Config{}, nil
	case PresetPermissive:
		return policy.Config{Allow: slices.Clone(permissiveAllow)}, nil
	case PresetRestrictive:
		return policy.Config{
			Deny: policy.Default().Ask,
			Ask:  slices.Clone(restrictiveAsk),
		}, nil
	}
	return policy.Config{}, fmt.Errorf("unknown policy preset %q: use standard, permissive or restrictive", name)
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
