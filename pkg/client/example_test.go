package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mockd/mockd/pkg/client"
	"github.com/mockd/mockd/pkg/mockdtest"
)

func get(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(fmt.Sprintf("%d %s", resp.StatusCode, body))
}

// The client works against any mockd or Mountebank admin API; here an in-process mockd.
func Example() {
	srv, err := mockdtest.Start()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	c := client.New(srv.AdminURL())
	ctx := context.Background()

	imp, err := c.CreateImposter(ctx, client.Imposter{
		Protocol:       "http",
		Name:           "greeter",
		RecordRequests: true,
		Stubs: []client.Stub{{
			Predicates: []client.Predicate{{Equals: client.Fields{"method": "GET", "path": "/hello"}}},
			Responses:  []client.Response{{Is: &client.Is{StatusCode: 200, Body: "hi"}}},
		}},
	})
	if err != nil {
		panic(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", imp.Port)
	fmt.Println(get(base + "/hello"))

	reqs, err := c.Requests(ctx, imp.Port)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(reqs), reqs[0].Method, reqs[0].Path)

	_, err = c.CreateImposter(ctx, client.Imposter{Protocol: "gopher"})
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Code())
	}
	// Output:
	// 200 hi
	// 1 GET /hello
	// 400 bad data
}

// Stubs can be added, replaced and deleted while the imposter runs.
func ExampleClient_AddStub() {
	srv, err := mockdtest.Start()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	c := client.New(srv.AdminURL())
	ctx := context.Background()

	imp, err := c.CreateImposter(ctx, client.Imposter{Protocol: "http", DefaultResponse: &client.Is{StatusCode: 404}})
	if err != nil {
		panic(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", imp.Port)
	fmt.Println(get(base + "/ping"))

	ping := client.Stub{
		Predicates: []client.Predicate{{Equals: client.Fields{"path": "/ping"}}},
		Responses:  []client.Response{{Is: &client.Is{StatusCode: 200, Body: "pong"}}},
	}
	if _, err := c.AddStub(ctx, imp.Port, ping); err != nil {
		panic(err)
	}
	fmt.Println(get(base + "/ping"))

	if _, err := c.DeleteStub(ctx, imp.Port, 0); err != nil {
		panic(err)
	}
	fmt.Println(get(base + "/ping"))
	// Output:
	// 404
	// 200 pong
	// 404
}

// Save reads every imposter as `mb save` writes it; ReplaceImposters puts such a list back.
func ExampleClient_Save() {
	srv, err := mockdtest.Start(mockdtest.YAML("imposters:\n  - {protocol: http, name: a, stubs: [{responses: [{is: {body: A}}]}]}\n"))
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	c := client.New(srv.AdminURL())
	ctx := context.Background()

	saved, err := c.Save(ctx, false)
	if err != nil {
		panic(err)
	}
	if _, err := c.DeleteImposters(ctx, client.ListOptions{}); err != nil {
		panic(err)
	}
	if _, err := c.ReplaceImposters(ctx, saved); err != nil {
		panic(err)
	}
	fmt.Println(saved[0].Name, get(srv.URL("a")+"/"))
	// Output:
	// a 200 A
}
