package admin

import (
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/mockd/mockd/internal/config"
	"github.com/mockd/mockd/internal/imposter"
)

// scenarioHandler routes mockd's scenario endpoints (the Mountebank API has none):
// GET /imposters/:port/scenarios, DELETE /imposters/:port/scenarios (reset all),
// PUT /imposters/:port/scenarios/:name {"state": …} and DELETE /imposters/:port/scenarios/:name.
func (a *API) scenarioHandler(method string, parts int) func(*fasthttp.RequestCtx, *imposter.Imposter, []string) *apiError {
	switch {
	case parts == 1 && (method == "GET" || method == "HEAD"):
		return a.listScenarios
	case parts == 1 && method == "DELETE":
		return func(ctx *fasthttp.RequestCtx, im *imposter.Imposter, rest []string) *apiError {
			if _, err := im.ResetScenarios(""); err != nil {
				return scenarioNotStored(err)
			}
			return a.listScenarios(ctx, im, rest)
		}
	case parts == 2 && method == "PUT":
		return a.setScenario
	case parts == 2 && method == "DELETE":
		return func(ctx *fasthttp.RequestCtx, im *imposter.Imposter, rest []string) *apiError {
			if ok, err := im.ResetScenarios(rest[1]); err != nil {
				return scenarioNotStored(err)
			} else if !ok {
				return noScenario(im, rest[1])
			}
			return sendScenario(ctx, im, rest[1])
		}
	}
	return nil
}

func scenarioJSON(s imposter.ScenarioInfo) *config.Object {
	states := make([]any, len(s.PossibleStates))
	for i, st := range s.PossibleStates {
		states[i] = st
	}
	return config.NewObject("name", s.Name, "state", s.State, "possibleStates", states)
}

func (a *API) listScenarios(ctx *fasthttp.RequestCtx, im *imposter.Imposter, _ []string) *apiError {
	list := []any{}
	for _, s := range im.Scenarios() {
		list = append(list, scenarioJSON(s))
	}
	send(ctx, 200, config.NewObject("scenarios", list))
	return nil
}

func (a *API) setScenario(ctx *fasthttp.RequestCtx, im *imposter.Imposter, rest []string) *apiError {
	body, aerr := readBody(ctx)
	if aerr != nil {
		return aerr
	}
	state, ok := get(config.AsObject(body), "state").(string)
	if !ok || state == "" {
		return badRequest(&config.Error{Code: config.CodeBadData, Message: "'state' must be a non-empty string"})
	}
	if ok, err := im.SetScenarioState(rest[1], state); err != nil {
		return scenarioNotStored(err)
	} else if !ok {
		return noScenario(im, rest[1])
	}
	return sendScenario(ctx, im, rest[1])
}

func sendScenario(ctx *fasthttp.RequestCtx, im *imposter.Imposter, name string) *apiError {
	for _, s := range im.Scenarios() {
		if s.Name == name {
			send(ctx, 200, scenarioJSON(s))
			return nil
		}
	}
	return noScenario(im, name)
}

func noScenario(im *imposter.Imposter, name string) *apiError {
	return &apiError{status: 404, errs: []*config.Error{{Code: config.CodeNoSuchResource,
		Message: "no stub of imposter " + strconv.Itoa(im.Port()) + " names the scenario " + strconv.Quote(name)}}}
}

// scenarioNotStored is the answer to a scenario change the shared store did not take.
func scenarioNotStored(err error) *apiError {
	if unavailable(err) {
		return storeUnavailable(err)
	}
	return &apiError{status: 500, errs: []*config.Error{{Code: "cannot persist", Message: err.Error()}}}
}
