package config

import (
	"errors"
	"fmt"
)

// noColor is the variable of the no-color.org convention.
const noColor = "NO_COLOR"

// LoadEnv applies the COURIER_* variables over c, reading them with getenv
// (os.Getenv in courier, a map in tests). An empty variable counts as
// unset. Lists are comma-separated. Every bad value is reported, one a
// line, as "COURIER_MAX_OUTPUT: want a whole number, got \"lots\"", and
// then nothing is applied.
//
// A non-empty NO_COLOR sets color to never, but only over the default: as
// no-color.org asks, the settings file, COURIER_COLOR and --color all
// override it.
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
