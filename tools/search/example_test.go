package search_test

import (
	"context"
	"fmt"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/search"
)

// A model's query and a user's whole request find the tool; a request for
// a service the catalog does not have is answered not confident, with the
// closest tool and the catalog's families; a family's name lists its
// tools.
func ExampleIndex_Search() {
	ix := search.New([]*tools.Tool{
		{Name: "repo_create_issue", Source: "repo", Description: "Create an issue in a repository."},
		{Name: "repo_list_issues", Source: "repo", Description: "List the issues of a repository."},
		{Name: "repo_add_comment", Source: "repo", Description: "Add a comment to an issue."},
		{Name: "fs_list_directory", Source: "fs", Description: "List the files and folders in a directory."},
		{Name: "fs_read_file", Source: "fs", Description: "Read the contents of a file."},
	})
	for _, q := range []string{
		"file a bug",
		"Someone reported the login page crashes. Please leave a comment on issue #12 saying it is fixed.",
		"What's in my Downloads folder?",
		"create a Jira ticket",
		"what can the fs server do",
	} {
		r := ix.Search(context.Background(), q, 2, nil)
		var names []string
		for _, h := range r.Hits {
			names = append(names, h.Tool.Name)
		}
		if !r.Confident {
			fmt.Printf("%q: not confident; closest %v; families %v\n", q, names, r.Families)
			continue
		}
		fmt.Printf("%q: %v\n", q, names)
	}
	// Output:
	// "file a bug": [repo_create_issue]
	// "Someone reported the login page crashes. Please leave a comment on issue #12 saying it is fixed.": [repo_add_comment repo_create_issue]
	// "What's in my Downloads folder?": [fs_list_directory]
	// "create a Jira ticket": not confident; closest [repo_create_issue]; families [{fs 2} {repo 3}]
	// "what can the fs server do": [fs_list_directory fs_read_file]
}
