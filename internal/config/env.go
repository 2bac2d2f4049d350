package config

import (
	"errors"
	"fmt"
)

const noColor = "NO_COLOR" // no-color.org

// LoadEnv applies the COURIER_* variables over c; an empty one counts as
// unset. Every bad value is reported, one a line, and then nothing is
// applied. NO_COLOR sets color to never over the default only, as
// no-color.org asks.
func (c *Config) LoadEnv(getenv func(string) string) error {
	next := c.clone()
	if getenv(noColor) != "" && next.sources["color"].src == SourceDefault {
		next.Color = ColorNever
		next.sources["color"] = origin{src: EnvSource(noColor)}
	}
	var errs []error
	for _, s := range settings {
		if !s.hasEnv() {
			continue
		}
		name := s.env()
		text := getenv(name)
		if text == "" {
			continue
		}
		if err := s.bind(next).parse(text); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		next.sources[s.key] = origin{src: EnvSource(name)}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	*c = *next
	return nil
}
