# bash completion for sked — installed as
# PREFIX/share/bash-completion/completions/sked, where bash-completion
# finds it on first use of `sked` when PREFIX/share is in XDG_DATA_DIRS
# (by default /usr/local/share and /usr/share are).
#
# Command names, subcommands ("cron add", "queue set"), the global flags
# and each command's flags come from the program itself (`sked --help`
# and `sked help COMMAND`, both written from its command table), so they
# follow the binary being completed and cannot drift from it
# (tests/build/t_completion.sh offers every one); the kinds of values
# (durations, strategies, status names, policies) are listed here.

_sked_commands() {
	# "  NAME         summary": NAME fills 12 columns after the indent
	"$1" --help 2>/dev/null | sed -n '/^Commands:$/,/^$/p' | sed '1d;$d' |
		cut -c3-14 | sed 's/ *$//'
}

_sked_global_flags() {
	"$1" --help 2>/dev/null | sed -n '/^Global flags/,/^[A-Z]/p' |
		grep -o -- '--[a-z][a-z-]*' | sort -u
}

_sked() {
	local cur prev words cword
	_init_completion -n = 2>/dev/null || {
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	}
	local sked=${words[0]}
	local i cmd="" sub=""

	# values of the flag just typed
	case $prev in
	--strategy)
		COMPREPLY=($(compgen -W "auto skip-locked readpast optimistic sqlite" -- "$cur"))
		return ;;
	--log-format)
		COMPREPLY=($(compgen -W "text json" -- "$cur"))
		return ;;
	--status)
		# the statuses each verb can act on; every status elsewhere
		local st="pending running succeeded dead retry cancelled blocked"
		for ((i = 1; i < cword; i++)); do
			case ${words[i]} in
			cancel) st="pending retry running"; break ;;
			retry) st="dead cancelled retry"; break ;;
			-*) ;;
			*) [ "${words[i - 1]}" = --status ] || break ;;
			esac
		done
		COMPREPLY=($(compgen -W "$st" -- "$cur"))
		return ;;
	--misfire)
		COMPREPLY=($(compgen -W "fire-once fire-all skip" -- "$cur"))
		return ;;
	--overlap)
		COMPREPLY=($(compgen -W "allow skip" -- "$cur"))
		return ;;
	--in | --lease | --poll | --grace | --timeout | --retry-base | --retry-max | \
		--ttl | --wait | --at-least | --older-than | --wait-db | --settle)
		[ -n "$cur" ] || COMPREPLY=(500ms 30s 10m 2h 1d)
		[ -n "$cur" ] && COMPREPLY=($(compgen -W "${cur}ms ${cur}s ${cur}m ${cur}h ${cur}d" -- "$cur"))
		return ;;
	--config | --lines | --graph | --db-file)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--tz)
		COMPREPLY=($(cd /usr/share/zoneinfo 2>/dev/null && compgen -f -- "$cur"))
		return ;;
	--db | --at | --from | --queue | --queues | --kind | --node-id | --unique | \
		--priority | --max-attempts | --count | --limit | --concurrency | \
		--prefetch | --handler | --payload)
		return ;;
	esac

	# find the command (and subcommand) among the words before this one
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--db | --db-file | --config | --strategy | --log-format) ((i++)) ;;
		-*) ;;
		*)
			if [ -z "$cmd" ]; then
				cmd=${words[i]}
			elif [ -z "$sub" ]; then
				sub=${words[i]}
				break
			fi ;;
		esac
	done

	if [ -z "$cmd" ]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$(_sked_global_flags "$sked")" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_sked_commands "$sked" | cut -d' ' -f1 | sort -u)" -- "$cur"))
		fi
		return
	fi
	# a command with subcommands (cron, lock, queue: "NAME SUB" in the
	# table) completes them first
	local subs
	subs=$(_sked_commands "$sked" | sed -n "s/^$cmd //p")
	if [ -n "$subs" ]; then
		if [ -z "$sub" ]; then
			COMPREPLY=($(compgen -W "$subs" -- "$cur"))
			return
		fi
		cmd="$cmd $sub"
	elif [ "$cmd" = help ]; then
		COMPREPLY=($(compgen -W "$(_sked_commands "$sked" | cut -d' ' -f1 | sort -u)" -- "$cur"))
		return
	fi
	if [[ $cur == -* ]]; then
		# shellcheck disable=SC2086 # "cron next" is two words
		COMPREPLY=($(compgen -W "$("$sked" help $cmd 2>/dev/null |
			grep -o -- '--[a-z][a-z-]*' | sort -u) --json --help" -- "$cur"))
	elif [ "$cmd" = "enqueue" ] || [ "$cmd" = "cron add" ]; then
		:
	fi
}
complete -F _sked sked
