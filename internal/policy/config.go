package policy

import "slices"

// Config holds rules as a config file gives them ("sudo", "mkfs*", "rm -r
// # recursive delete", "@download"). When one matches a program it decides
// for it, whatever the defaults say.
type Config struct {
	Deny       []string `toml:"deny" json:"deny,omitempty"`
	Ask        []string `toml:"ask" json:"ask,omitempty"`
	Allow      []string `toml:"allow" json:"allow,omitempty"`
	NoDefaults bool     `toml:"no_defaults" json:"no_defaults,omitempty"`
}

// Default returns a copy of courier's built-in rules.
func Default() Config {
	return Config{
		Deny: slices.Clone(defaultDeny),
		Ask:  slices.Clone(defaultAsk),
	}
}

// rules gives each of progs the same description.
func rules(desc string, progs ...string) []string {
	out := make([]string, len(progs))
	for i, p := range progs {
		out[i] = p + " # " + desc
	}
	return out
}

// defaultDeny: privilege escalation and commands on the whole machine.
var defaultDeny = slices.Concat(
	rules("privilege escalation is never run by courier", "sudo", "su", "doas", "pkexec", "run0", "sudoedit"),
	rules("shuts down, restarts or suspends the machine", "shutdown", "reboot", "halt", "poweroff", "telinit",
		"init [0-6sS]", "kexec", "systemctl poweroff", "systemctl reboot", "systemctl halt", "systemctl kexec",
		"systemctl soft-reboot", "systemctl suspend*", "systemctl hibernate", "systemctl hybrid-sleep",
		"systemctl rescue", "systemctl emergency", "loginctl poweroff", "loginctl reboot", "loginctl suspend"),
	rules("formats or repartitions disks", "mkfs*", "mke2fs", "mkswap", "fdisk", "sfdisk", "cfdisk", "gdisk",
		"sgdisk", "parted", "wipefs", "blkdiscard"),
	rules("loads or unloads kernel modules", "insmod", "rmmod", "modprobe"),
	rules("changes the machine's user accounts", "useradd", "userdel", "usermod", "groupadd", "groupdel",
		"passwd", "chpasswd", "visudo"),
	[]string{checkDeviceWrite},
)

// defaultAsk: commands that destroy work, reach outside the workspace, or
// cannot be checked.
var defaultAsk = slices.Concat(
	rules("recursive or forced delete", "rm -r", "rm -R", "rm -f", "rm --recursive", "rm --force"),
	rules("deletes everything find matches", "find -delete"),
	rules("overwrites files beyond recovery", "shred"),
	rules("publishes commits to a remote", "git push"),
	rules("discards uncommitted changes", "git reset --hard", "git checkout .", "git checkout * .",
		"git checkout -f", "git checkout --force", "git restore .", "git restore * .", "git switch -f",
		"git switch --force", "git switch --discard-changes"),
	rules("deletes untracked files", "git clean -f", "git clean --force"),
	rules("deletes stashed changes", "git stash drop", "git stash clear"),
	rules("deletes a branch that may not be merged", "git branch -D", "git branch -d -f", "git branch --delete --force"),
	rules("changes permissions or owners recursively", "chmod -R", "chmod --recursive", "chown -R",
		"chown --recursive", "chgrp -R", "chgrp --recursive"),
	rules("stops processes", "kill", "pkill", "killall"),
	rules("changes the machine's mounted file systems", "mount", "umount"),
	rules("installs jobs that run later, outside the session", "crontab"),
	rules("publishes to a registry others use", "npm publish", "pnpm publish", "yarn publish", "cargo publish",
		"twine upload", "gem push", "poetry publish", "uv publish", "docker push", "podman push"),
	rules("runs the commands of a Makefile, which courier cannot check (the reply may have written it)", "make", "gmake"),
	[]string{checkDownload, checkDynamic, checkDevice, checkUnparseable, checkGitWrite, checkRunsCode},
)
