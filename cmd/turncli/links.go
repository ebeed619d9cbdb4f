package main

import (
	"context"
	"flag"
	"fmt"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/termtext"
)

// linkCommands manage which person each chat account is: a decision relayed from a chat
// account is taken as its linked person's.
var linkCommands = []command{
	listCommand("links", "list the links from chat accounts to persons, most recently linked first",
		[]string{"SURFACE", "CHAT USER", "PERSON", "LINKED BY", "LINKED"},
		func(l *operatorv1.IdentityLink) []string {
			return []string{l.GetSurface(), l.GetChatUserId(), l.GetPerson(), l.GetCreatedBy(), when(l.GetCreatedAt())}
		},
		func(fs *flag.FlagSet) fetchPage[*operatorv1.IdentityLink] {
			surface := fs.String("surface", "", "only this surface's links (matrix, slack, …)")
			person := fs.String("person", "", "only this person's links")
			return func(ctx context.Context, c *cli, size uint32, token string) ([]*operatorv1.IdentityLink, string, error) {
				resp, err := c.api.ListIdentityLinks(ctx, &operatorv1.ListIdentityLinksRequest{
					Surface: *surface, Person: *person, PageSize: size, PageToken: token,
				})
				return resp.GetLinks(), resp.GetNextPageToken(), err
			}
		}),
	{noun: "links", verb: "add", args: arity{"SURFACE", "CHAT_USER_ID", "PERSON"},
		summary: "link the account CHAT_USER_ID on SURFACE to PERSON, replacing its link (admins)\n\n" +
			"SURFACE is the chat system (matrix, slack); CHAT_USER_ID the account as it names it\n" +
			"(@ada:example.org, U024BE7LH); PERSON the requester id or operator name it is.",
		setup: func(*flag.FlagSet) runner {
			return online(func(ctx context.Context, c *cli, args []string) error {
				ctx, cancel := c.call(ctx)
				defer cancel()
				resp, err := c.api.LinkIdentity(ctx, &operatorv1.LinkIdentityRequest{Surface: args[0], ChatUserId: args[1], Person: args[2]})
				if err != nil {
					return err
				}
				if c.global.json {
					return c.emit(resp)
				}
				l := resp.GetLink()
				replaced := "no"
				if resp.GetReplaced() {
					replaced = "yes"
				}
				return c.fields("surface", l.GetSurface(), "chat user", l.GetChatUserId(), "person", l.GetPerson(),
					"linked by", l.GetCreatedBy(), "linked", at(l.GetCreatedAt()), "replaced a link", replaced)
			})
		}},
	{noun: "links", verb: "rm", args: arity{"SURFACE", "CHAT_USER_ID"},
		summary: "unlink the account CHAT_USER_ID on SURFACE (admins)",
		setup: func(*flag.FlagSet) runner {
			return online(func(ctx context.Context, c *cli, args []string) error {
				ctx, cancel := c.call(ctx)
				defer cancel()
				if _, err := c.api.UnlinkIdentity(ctx, &operatorv1.UnlinkIdentityRequest{Surface: args[0], ChatUserId: args[1]}); err != nil {
					return err
				}
				if c.global.json {
					return c.emit(&operatorv1.UnlinkIdentityResponse{})
				}
				_, err := fmt.Fprintf(c.stdout, "%s account %s unlinked\n", termtext.Inert(args[0]), termtext.Inert(args[1]))
				return err
			})
		}},
}
