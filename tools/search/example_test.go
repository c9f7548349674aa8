package search_test

import (
	"fmt"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/search"
)

// A model's query and a user's whole request find the tool; a request for
// a service the catalog does not have finds nothing.
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
	} {
		hits, _ := sure(ix.Search(bg, q, 1, nil))
		if len(hits) == 0 {
			fmt.Printf("%q: nothing fits\n", q)
			continue
		}
		fmt.Printf("%q: %s\n", q, hits[0].Tool.Name)
	}
	// Output:
	// "file a bug": repo_create_issue
	// "Someone reported the login page crashes. Please leave a comment on issue #12 saying it is fixed.": repo_add_comment
	// "What's in my Downloads folder?": fs_list_directory
	// "create a Jira ticket": nothing fits
}
