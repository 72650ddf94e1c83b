//go:build !race

package match

const underRace = false
