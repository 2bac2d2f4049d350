//go:build !linux

package inbox

import "errors"

// closedEvents is Linux's; elsewhere replies settle.
type closedEvents struct{}

func startClosed(string) (*closedEvents, error) {
	return nil, errors.New("close-write events exist only on Linux")
}

func (c *closedEvents) add() error             { return nil }
func (c *closedEvents) channel() <-chan string { return nil }
func (c *closedEvents) stop()                  {}

func beingWritten(string) (bool, error) {
	return false, errors.New("open files are asked about on Linux only")
}
