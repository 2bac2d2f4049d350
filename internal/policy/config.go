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

const (
	privilege = " # privilege escalation is never run by courier"
	power     = " # shuts down, restarts or suspends the machine"
	disks     = " # formats or repartitions disks"
	modules   = " # loads or unloads kernel modules"
	users     = " # changes the machine's user accounts"
	rmDesc    = " # recursive or forced delete"
	permDesc  = " # changes permissions or owners recursively"
	discard   = " # discards uncommitted changes"
	publish   = " # publishes to a registry others use"
	mounts    = " # changes the machine's mounted file systems"
	kills     = " # stops processes"
	makefile  = " # runs the commands of a Makefile, which courier cannot check (the reply may have written it)"
)

// defaultDeny: privilege escalation and commands on the whole machine.
var defaultDeny = []string{
	"sudo" + privilege, "su" + privilege, "doas" + privilege, "pkexec" + privilege,
	"run0" + privilege, "sudoedit" + privilege,
	"shutdown" + power, "reboot" + power, "halt" + power, "poweroff" + power,
	"telinit" + power, "init [0-6sS]" + power, "kexec" + power,
	"systemctl poweroff" + power, "systemctl reboot" + power, "systemctl halt" + power,
	"systemctl kexec" + power, "systemctl soft-reboot" + power, "systemctl suspend*" + power,
	"systemctl hibernate" + power, "systemctl hybrid-sleep" + power,
	"systemctl rescue" + power, "systemctl emergency" + power,
	"loginctl poweroff" + power, "loginctl reboot" + power, "loginctl suspend" + power,
	"mkfs*" + disks, "mke2fs" + disks, "mkswap" + disks, "fdisk" + disks, "sfdisk" + disks,
	"cfdisk" + disks, "gdisk" + disks, "sgdisk" + disks, "parted" + disks, "wipefs" + disks,
	"blkdiscard" + disks,
	"insmod" + modules, "rmmod" + modules, "modprobe" + modules,
	"useradd" + users, "userdel" + users, "usermod" + users, "groupadd" + users,
	"groupdel" + users, "passwd" + users, "chpasswd" + users, "visudo" + users,
	checkDeviceWrite,
}

// defaultAsk: commands that destroy work, reach outside the workspace, or
// cannot be checked.
var defaultAsk = []string{
	"rm -r" + rmDesc, "rm -R" + rmDesc, "rm -f" + rmDesc, "rm --recursive" + rmDesc, "rm --force" + rmDesc,
	"find -delete # deletes everything find matches",
	"shred # overwrites files beyond recovery",
	"git push # publishes commits to a remote",
	"git reset --hard" + discard,
	"git checkout ." + discard, "git checkout * ." + discard,
	"git checkout -f" + discard, "git checkout --force" + discard,
	"git restore ." + discard, "git restore * ." + discard,
	"git switch -f" + discard, "git switch --force" + discard, "git switch --discard-changes" + discard,
	"git clean -f # deletes untracked files", "git clean --force # deletes untracked files",
	"git stash drop # deletes stashed changes", "git stash clear # deletes stashed changes",
	"git branch -D # deletes a branch that may not be merged",
	"git branch -d -f # deletes a branch that may not be merged",
	"git branch --delete --force # deletes a branch that may not be merged",
	"chmod -R" + permDesc, "chmod --recursive" + permDesc,
	"chown -R" + permDesc, "chown --recursive" + permDesc,
	"chgrp -R" + permDesc, "chgrp --recursive" + permDesc,
	"kill" + kills, "pkill" + kills, "killall" + kills,
	"mount" + mounts, "umount" + mounts,
	"crontab # installs jobs that run later, outside the session",
	"npm publish" + publish, "pnpm publish" + publish, "yarn publish" + publish,
	"cargo publish" + publish, "twine upload" + publish, "gem push" + publish,
	"poetry publish" + publish, "uv publish" + publish,
	"docker push" + publish, "podman push" + publish,
	"make" + makefile, "gmake" + makefile,
	checkDownload, checkDynamic, checkDevice, checkUnparseable, checkGitWrite, checkRunsCode,
}
