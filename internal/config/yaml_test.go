package config

import "testing"

func TestParseYAMLKeepEnv(t *testing.T) {
	t.Setenv("KEEP_ENV_X", "set")
	src := []byte("a: ${KEEP_ENV_X}\nb: ${KEEP_ENV_Y:-4545}\nc: $${KEEP_ENV_X}\nd: \"${KEEP_ENV_X}\"\n")
	v, _, err := ParseYAMLKeepEnv(src)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(MarshalJSON(v, 0)), `{"a":"${KEEP_ENV_X}","b":"${KEEP_ENV_Y:-4545}","c":"${KEEP_ENV_X}","d":"${KEEP_ENV_X}"}`; got != want {
		t.Errorf("kept: %s, want %s", got, want)
	}
	v, _, _ = ParseYAML(src)
	if got, want := string(MarshalJSON(v, 0)), `{"a":"set","b":4545,"c":"${KEEP_ENV_X}","d":"set"}`; got != want {
		t.Errorf("expanded: %s, want %s", got, want)
	}
}
