// Package policy decides whether courier may run a shell command on its
// own (allow), only with the person's approval (ask), or not at all (deny).
//
// A command is parsed as shell (bash, or POSIX sh when bash will not
// parse it) and every program it would start is found: in pipelines and
// lists, subshells and groups, command and process substitutions (also
// inside arguments, double quotes, assignments, redirections and
// here-documents), function bodies, if/while/for/case bodies, behind
// wrappers (env, nohup, timeout, nice, ionice, stdbuf, setsid, chroot,
// command, exec, builtin, time, xargs, busybox, watch, find -exec and the
// denied sudo-like ones), and in code that is parsed again: sh -c and
// bash -c strings, here-documents fed to a shell, eval arguments, alias
// values, trap actions, env -S strings and watch commands, up to a depth
// limit. Quotes and escapes are removed before a program name is judged
// (`s"u"do` and `\sudo` are sudo) and a path is judged by its base name
// (/usr/bin/sudo is sudo). Words that are only arguments, as in
// `echo sudo`, are not programs.
//
// # Rules
//
// A rule is a line of words, optionally followed by "#" and a description
// that reasons show:
//
//	program [option|operand ...] [# description]
//
// The program is a name or a shell pattern (*, ?, [...]) matched against
// the program's base name, ignoring case as case-insensitive file systems
// do: "sudo", "mkfs*". With a "/" it is matched against the whole path as
// written, cleaned: "./deploy.sh".
//
// An option word starts with "-". A single letter (-r) matches that
// option alone or in a cluster (-rf, -fr); a longer one (-delete,
// --force) matches that whole argument, also with "=value", and a --name
// also matches the shortened forms GNU programs accept (--rec). Options
// match anywhere before a "--" argument.
//
// Other words are shell patterns for operands, the arguments that are not
// options, matched in order against the first of them: "git push"
// matches `git push`, `git push -f origin` and `git -C dir push`.
//
// A rule that is only "@" and a name sets the decision for a built-in
// check by the list it is in:
//
//	@dynamic       a program name or shell code computed at run time
//	               ($CMD x, $(which rm) x, bash -c "$s", code from a pipe)
//	@download      code downloaded from the network and run
//	               (curl URL | sh, bash <(wget -O- URL), bash -c "$(curl URL)")
//	@device-write  a write to a device (> /dev/sda, dd of=/dev/sdb) or to a
//	               kernel file under /proc or /sys
//	@device        any other use of a device such as a disk, and bash's
//	               /dev/tcp and /dev/udp network redirections
//	@unparseable   command text that cannot be parsed as shell
//
// /dev/null, /dev/zero, /dev/stdout, /dev/stderr, /dev/tty, /dev/fd/N and
// the like are not devices for these checks.
//
// # Decisions
//
// Each program, and each thing a check notices, gets a decision: the
// config's rules are consulted first and, when none of them matches, the
// defaults. Within one set of rules the most severe matching rule wins
// (deny over ask over allow), so a config with Deny "git" and Allow
// "git status" denies git status too. Nothing matching means allow. The
// command's decision is the most severe of all of them, and its reason
// lists every program and rule behind it.
//
// Where a command leaves doubt, deny and ask rules match and allow rules
// do not: a computed argument ($f, *.log, xargs input) may be any option
// or operand, and a word after an option may be that option's value or an
// operand. So `rm "$f"` needs approval under the rule "rm -r" (write
// `rm -- "$f"` to say it is a file), and an allow rule "git push" does not
// cover `git --no-pager push`. A program path with an unquoted expansion,
// like $HOME/bin/tool, needs approval as a computed name, since the
// expansion may split into several words; "$HOME"/bin/tool does not.
//
// Only whole-tree git discards ask by default (git checkout ., git
// restore ., git reset --hard); restoring named files is an everyday undo
// and is allowed. mount and umount ask rather than being denied, because
// listing mounts is common and harmless.
//
// The policy judges names and arguments; it cannot see into scripts and
// programs the command runs (make, npm run, python -c), nor follow a
// program copied or linked under another name. It is one layer of
// courier's safety, beside the sandbox the shell runs in.
package policy
