package client

import (
	"fmt"
	"strings"
)

// completion prints the completion script of `completion bash|zsh`, generated from the
// command table.
func (a *app) completion(args []string) int {
	if wantsHelp(args) || (len(args) == 1 && args[0] == "help") {
		return a.printHelp(completionHelp())
	}
	if len(args) != 1 {
		return a.fail(invalidf("completion takes one shell: mindroom-agent completion bash|zsh"))
	}
	switch args[0] {
	case "bash":
		return a.printHelp(bashCompletion())
	case "zsh":
		return a.printHelp(zshCompletion())
	}
	return a.fail(invalidf("completion supports bash and zsh, not %q", args[0]))
}

var topWords = []string{"tools", "calls", "context", "mcp", "completion", "version", "help", "--help", "--version"}

// mcpOptions are the words completed after `mindroom-agent mcp`.
func mcpOptions() string {
	var o []string
	for _, f := range mcpCommand.flags {
		o = append(o, "--"+f.name)
	}
	return strings.Join(append(o, "--help"), " ")
}

// commandCases returns one shell case label ("GROUP COMMAND") per command with its options.
func commandCases() (labels, opts []string) {
	for _, g := range groups {
		for _, c := range g.commands {
			var o []string
			for _, f := range c.flags {
				o = append(o, "--"+f.name)
			}
			labels = append(labels, g.name+" "+c.name)
			opts = append(opts, strings.Join(append(o, "--help"), " "))
		}
	}
	return labels, opts
}

func bashCompletion() string {
	var b strings.Builder
	b.WriteString(`# bash completion for mindroom-agent: source <(mindroom-agent completion bash)
_mindroom_agent() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    COMPREPLY=()
    if [[ "$prev" == --json-file ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
        return
    fi
    if [[ $COMP_CWORD -eq 1 ]]; then
`)
	fmt.Fprintf(&b, "        COMPREPLY=($(compgen -W %q -- \"$cur\"))\n", strings.Join(topWords, " "))
	b.WriteString(`        return
    fi
    if [[ "${COMP_WORDS[1]}" == mcp ]]; then
`)
	fmt.Fprintf(&b, "        COMPREPLY=($(compgen -W %q -- \"$cur\"))\n", mcpOptions())
	b.WriteString(`        return
    fi
    if [[ $COMP_CWORD -eq 2 ]]; then
        case "${COMP_WORDS[1]}" in
`)
	for _, g := range groups {
		fmt.Fprintf(&b, "            %s) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", g.name, strings.Join(g.commandNames(), " ")+" help --help")
	}
	fmt.Fprintf(&b, "            completion) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", "bash zsh --help")
	fmt.Fprintf(&b, "            help) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", "tools calls context mcp completion")
	b.WriteString(`        esac
        return
    fi
    [[ "$cur" == -* ]] || return
    case "${COMP_WORDS[1]} ${COMP_WORDS[2]}" in
`)
	labels, opts := commandCases()
	for i := range labels {
		fmt.Fprintf(&b, "        %q) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", labels[i], opts[i])
	}
	b.WriteString(`    esac
}
complete -F _mindroom_agent mindroom-agent
`)
	return b.String()
}

func zshCompletion() string {
	var b strings.Builder
	b.WriteString(`#compdef mindroom-agent
# zsh completion for mindroom-agent: put it in $fpath as _mindroom-agent, or source it.
_mindroom_agent() {
    if (( CURRENT == 2 )); then
`)
	fmt.Fprintf(&b, "        compadd -- %s\n", strings.Join(topWords, " "))
	b.WriteString(`        return
    fi
    if [[ ${words[2]} == mcp ]]; then
`)
	fmt.Fprintf(&b, "        compadd -- %s\n", mcpOptions())
	b.WriteString(`        return
    fi
    if (( CURRENT == 3 )); then
        case ${words[2]} in
`)
	for _, g := range groups {
		fmt.Fprintf(&b, "            %s) compadd -- %s help --help ;;\n", g.name, strings.Join(g.commandNames(), " "))
	}
	b.WriteString(`            completion) compadd -- bash zsh --help ;;
            help) compadd -- tools calls context mcp completion ;;
        esac
        return
    fi
    if [[ ${words[CURRENT-1]} == --json-file ]]; then
        _files
        return
    fi
    [[ ${words[CURRENT]} == -* ]] || return
    case "${words[2]} ${words[3]}" in
`)
	labels, opts := commandCases()
	for i := range labels {
		fmt.Fprintf(&b, "        %q) compadd -- %s ;;\n", labels[i], opts[i])
	}
	b.WriteString(`    esac
}
if [[ ${funcstack[1]} == _mindroom_agent ]]; then
    _mindroom_agent "$@"
else
    compdef _mindroom_agent mindroom-agent
fi
`)
	return b.String()
}
