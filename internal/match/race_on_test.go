//go:build race

package match

const underRace = true
