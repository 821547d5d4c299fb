//! GNU-style option parsing: short flags combined (`-la`), values attached
//! or separate (`-n5`, `-n 5`), long options with `=` or a separate value
//! and unique abbreviations (`--ignore` for `--ignore-case`), options after
//! operands (GNU permutes), and `--` ending the options.

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Val {
    /// A flag.
    No,
    /// Needs a value.
    Req,
    /// Long form only: may take `=VALUE`.
    Opt,
}

/// One accepted option. `id` names it in [`Parsed`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spec {
    pub(crate) short: Option<char>,
    pub(crate) long: Option<&'static str>,
    pub(crate) val: Val,
    pub(crate) id: &'static str,
}

/// A flag with a short and/or long name (`'\0'` or `""` for none).
pub(crate) const fn flag(short: char, long: &'static str, id: &'static str) -> Spec {
    spec(short, long, Val::No, id)
}

/// An option that takes a value.
pub(crate) const fn value(short: char, long: &'static str, id: &'static str) -> Spec {
    spec(short, long, Val::Req, id)
}

/// A long option with an optional `=VALUE`.
pub(crate) const fn optional(long: &'static str, id: &'static str) -> Spec {
    spec('\0', long, Val::Opt, id)
}

const fn spec(short: char, long: &'static str, val: Val, id: &'static str) -> Spec {
    Spec {
        short: if short == '\0' { None } else { Some(short) },
        long: if long.is_empty() { None } else { Some(long) },
        val,
        id,
    }
}

/// The options found, in order, and the operands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Parsed {
    pub(crate) opts: Vec<(&'static str, Option<String>)>,
    pub(crate) operands: Vec<String>,
}

impl Parsed {
    /// Whether the option was given.
    pub(crate) fn has(&self, id: &str) -> bool {
        self.opts.iter().any(|(o, _)| *o == id)
    }

    /// The option's last value.
    pub(crate) fn value(&self, id: &str) -> Option<&str> {
        self.opts
            .iter()
            .rev()
            .find(|(o, _)| *o == id)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Every value of a repeatable option, in order.
    pub(crate) fn values(&self, id: &str) -> Vec<&str> {
        self.opts
            .iter()
            .filter(|(o, _)| *o == id)
            .filter_map(|(_, v)| v.as_deref())
            .collect()
    }

    /// Which of `ids` was given last (for options that override each other).
    pub(crate) fn last_of(&self, ids: &[&str]) -> Option<&'static str> {
        self.opts
            .iter()
            .rev()
            .find(|(o, _)| ids.contains(o))
            .map(|(o, _)| *o)
    }
}

/// Why parsing stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ArgError {
    /// `--help` was given.
    Help,
    /// A usage error, worded like GNU getopt.
    Bad(String),
}

/// The spec of `--NAME` (or of the one long option it abbreviates); `arg`
/// is the whole argument, which GNU getopt names, `=VALUE` and all, when
/// it is no option.
fn find_long<'a>(cmd: &str, name: &str, arg: &str, spec: &'a [Spec]) -> Result<&'a Spec, ArgError> {
    if let Some(s) = spec.iter().find(|s| s.long == Some(name)) {
        return Ok(s);
    }
    let candidates: Vec<&Spec> = spec
        .iter()
        .filter(|s| s.long.is_some_and(|l| l.starts_with(name)))
        .collect();
    match candidates.as_slice() {
        [one] => Ok(one),
        [] => Err(ArgError::Bad(format!("{cmd}: unrecognized option '{arg}'"))),
        many => {
            let names: Vec<String> = many
                .iter()
                .filter_map(|s| s.long.map(|l| format!("'--{l}'")))
                .collect();
            Err(ArgError::Bad(format!(
                "{cmd}: option '--{name}' is ambiguous; possibilities: {}",
                names.join(" ")
            )))
        }
    }
}

/// How options and operands may mix.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// GNU getopt's default: options anywhere, operands collected around them.
    Permute,
    /// getopt's leading `+` (basename, env, xargs): the first operand ends the
    /// options, so `basename -s .c a.c -a` names a file `-a`.
    InOrder,
}

/// Parses `args` (without the command name) against `spec`.
pub(crate) fn parse(
    cmd: &str,
    args: &[String],
    spec: &[Spec],
    order: Order,
) -> Result<Parsed, ArgError> {
    let mut parsed = Parsed::default();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg == "--" {
            parsed.operands.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (long, None),
            };
            if name == "help" {
                return Err(ArgError::Help);
            }
            let s = find_long(cmd, name, arg, spec)?;
            let full = s.long.unwrap_or(name);
            let v = match (s.val, inline) {
                (Val::No, Some(_)) => {
                    return Err(ArgError::Bad(format!(
                        "{cmd}: option '--{full}' doesn't allow an argument"
                    )));
                }
                (Val::No, None) => None,
                (Val::Opt, v) => v,
                (Val::Req, Some(v)) => Some(v),
                (Val::Req, None) => match args.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.clone())
                    }
                    None => {
                        return Err(ArgError::Bad(format!(
                            "{cmd}: option '--{full}' requires an argument"
                        )));
                    }
                },
            };
            parsed.opts.push((s.id, v));
            continue;
        }
        if arg.len() < 2 || !arg.starts_with('-') {
            if order == Order::InOrder {
                parsed.operands.extend(args[i - 1..].iter().cloned());
                break;
            }
            parsed.operands.push(arg.clone());
            continue;
        }
        let chars: Vec<char> = arg.chars().skip(1).collect();
        let mut j = 0;
        while let Some(&c) = chars.get(j) {
            j += 1;
            let Some(s) = spec.iter().find(|s| s.short == Some(c)) else {
                return Err(ArgError::Bad(format!("{cmd}: invalid option -- '{c}'")));
            };
            if s.val == Val::No {
                parsed.opts.push((s.id, None));
                continue;
            }
            let rest: String = chars[j..].iter().collect();
            let v = if !rest.is_empty() {
                rest
            } else if let Some(v) = args.get(i) {
                i += 1;
                v.clone()
            } else {
                return Err(ArgError::Bad(format!(
                    "{cmd}: option requires an argument -- '{c}'"
                )));
            };
            parsed.opts.push((s.id, Some(v)));
            break;
        }
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &[Spec] = &[
        flag('l', "", "l"),
        flag('a', "all", "a"),
        value('n', "lines", "n"),
        flag('i', "ignore-case", "i"),
        flag('\0', "ignore-other", "io"),
        optional("color", "color"),
    ];

    fn p(args: &[&str]) -> Result<Parsed, ArgError> {
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        parse("cmd", &args, SPEC, Order::Permute)
    }

    #[test]
    fn forms() {
        let r = p(&["-la", "x", "-n5", "y", "--lines", "7", "--", "-l"]).expect("parses");
        assert!(r.has("l") && r.has("a"));
        assert_eq!(r.values("n"), vec!["5", "7"]);
        assert_eq!(r.operands, vec!["x", "y", "-l"]);
        let r = p(&[
            "-n",
            "3",
            "-",
            "--all",
            "--lines=4",
            "--color",
            "--color=never",
        ])
        .expect("parses");
        assert_eq!(r.value("n"), Some("4"));
        assert_eq!(r.operands, vec!["-"]);
        assert_eq!(r.last_of(&["l", "a"]), Some("a"));
        let r = p(&["--ignore-c"]).expect("an unambiguous prefix");
        assert!(r.has("i"));
    }

    #[test]
    fn in_order_the_first_operand_ends_the_options() {
        let args: Vec<String> = ["-l", "x", "-a", "--", "-n"].map(String::from).to_vec();
        let r = parse("cmd", &args, SPEC, Order::InOrder).expect("parses");
        assert!(r.has("l") && !r.has("a"));
        assert_eq!(r.operands, vec!["x", "-a", "--", "-n"]);
    }

    #[test]
    fn errors() {
        let bad = |args: &[&str]| match p(args) {
            Err(ArgError::Bad(m)) => m,
            other => panic!("{args:?}: {other:?}"),
        };
        assert_eq!(bad(&["-z"]), "cmd: invalid option -- 'z'");
        assert_eq!(bad(&["-n"]), "cmd: option requires an argument -- 'n'");
        assert_eq!(bad(&["--nope"]), "cmd: unrecognized option '--nope'");
        assert_eq!(
            bad(&["--all=1"]),
            "cmd: option '--all' doesn't allow an argument"
        );
        assert_eq!(
            bad(&["--lines"]),
            "cmd: option '--lines' requires an argument"
        );
        assert!(bad(&["--ign"]).contains("ambiguous"));
        assert_eq!(p(&["--help"]), Err(ArgError::Help));
    }
}
