package session

// TurnDir is where the turn that answers outbox seq lives, for tests that
// look at a turn's files on disk.
func TurnDir(s Store, id string, seq int) string { return s.turnDir(id, seq) }
