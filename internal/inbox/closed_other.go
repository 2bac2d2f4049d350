//go:build !linux

package inbox

import "errors"

// closedEvents is only available on Linux; elsewhere a reply is delivered
// once it has settled.
type closedEvents struct{}

func startClosed(string) (*closedEvents, error) {
	return nil, errors.New("close-write events exist only on Linux")
}

func (c *closedEvents) add() error             { return nil }
func (c *closedEvents) channel() <-chan string { return nil }
func (c *closedEvents) stop()                  {}

// beingWritten cannot tell here: a reply is delivered once it has settled.
func beingWritten(string) (bool, error) {
	return false, errors.New("open files are asked about on Linux only")
}
