package main

import "runtime/debug"

// The cert-manager module this binary was built from, as the Go build recorded it.
func moduleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path == "github.com/cert-manager/cert-manager" {
			return dep.Version
		}
	}
	return "unknown"
}
