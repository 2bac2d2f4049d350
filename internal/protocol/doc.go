// Package protocol converts between courier's tag protocol text and its
// internal command model: replies are parsed into commands, session state is
// rendered into outbox text.
package protocol
