//! The small part of Markdown the report's texts use, as HTML: headings
//! (with ids for links), paragraphs, lists, fenced code, tables, and inline
//! code, bold, emphasis and links.

use std::fmt::Write as _;

use super::esc;

/// `text` as an HTML id: lower case, runs of other characters as one `-`,
/// as GitHub names its heading anchors.
///
/// # Examples
///
/// ```
/// use benches::report::markdown::slug;
/// assert_eq!(slug("fillsync-wal-t8"), "fillsync-wal-t8");
/// assert_eq!(slug("Engine against RocksDB 7.8.3"), "engine-against-rocksdb-783");
/// ```
pub fn slug(text: &str) -> String {
    let mut s = String::new();
    for c in text.trim().chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            s.extend(c.to_lowercase());
        } else if c == ' ' {
            s.push('-');
        }
    }
    s
}

/// Drops each `## ` section (its heading and everything up to the next
/// heading of level 2 or 1) whose title `drop` accepts.
///
/// # Examples
///
/// ```
/// use benches::report::markdown::drop_sections;
/// let md = "# P\nintro\n## Engine x\na\n### t8\nb\n## Primitives\nc\n";
/// let kept = drop_sections(md, |title| title.starts_with("Engine"));
/// assert_eq!(kept, "# P\nintro\n## Primitives\nc\n");
/// ```
pub fn drop_sections(md: &str, drop: impl Fn(&str) -> bool) -> String {
    let mut out = String::new();
    let mut dropping = false;
    let mut in_code = false;
    for line in md.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        let level = heading_level(line);
        if !in_code && matches!(level, Some(1 | 2)) {
            let title = line.trim_start_matches('#').trim();
            dropping = level == Some(2) && drop(title);
        }
        if !dropping {
            out.push_str(line);
        }
    }
    out
}

fn heading_level(line: &str) -> Option<usize> {
    let hashes = line.chars().take_while(|&c| c == '#').count();
    ((1..=6).contains(&hashes) && line[hashes..].starts_with(' ')).then_some(hashes)
}

/// Markdown to HTML. Relative link targets (not `#...`, not a URL with a
/// scheme) get `link_base` in front, for a page that lives elsewhere than
/// the Markdown file; headings of level `h` become `<h{h + shift}>`.
///
/// # Examples
///
/// ```
/// use benches::report::markdown::to_html;
/// let html = to_html("## Why\n\nA `memcmp`\nof **32** bytes.\n\n- one\n- [two](x.md)\n", "../", 1);
/// assert_eq!(
///     html,
///     "<h3 id=\"why\">Why</h3>\n<p>A <code>memcmp</code> of <strong>32</strong> bytes.</p>\n\
///      <ul>\n<li>one</li>\n<li><a href=\"../x.md\">two</a></li>\n</ul>\n"
/// );
/// ```
pub fn to_html(md: &str, link_base: &str, shift: usize) -> String {
    let lines: Vec<&str> = md.lines().collect();
    let mut html = String::new();
    let mut i = 0;
    let inline = |t: &str| inline_html(t, link_base);
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        if trimmed.is_empty() {
            i += 1;
        } else if trimmed.starts_with("```") {
            let lang = trimmed.trim_start_matches('`').trim();
            i += 1;
            let mut code = String::new();
            while i < lines.len() && !lines[i].trim_start().starts_with("```") {
                code.push_str(lines[i]);
                code.push('\n');
                i += 1;
            }
            i += 1; // the closing fence
            let class = if lang.is_empty() {
                String::new()
            } else {
                format!(" class=\"language-{}\"", esc(lang))
            };
            let _ = writeln!(html, "<pre><code{class}>{}</code></pre>", esc(&code));
        } else if let Some(level) = heading_level(trimmed) {
            let text = trimmed[level..].trim().trim_end_matches('#').trim();
            let h = (level + shift).min(6);
            let _ = writeln!(
                html,
                "<h{h} id=\"{}\">{}</h{h}>",
                esc(&slug(text)),
                inline(text)
            );
            i += 1;
        } else if trimmed.starts_with('|') {
            let start = i;
            while i < lines.len() && lines[i].trim().starts_with('|') {
                i += 1;
            }
            html.push_str(&table(&lines[start..i], &inline));
        } else if list_item(line).is_some() {
            let ordered = list_item(line).is_some_and(|(o, _)| o);
            let tag = if ordered { "ol" } else { "ul" };
            let _ = writeln!(html, "<{tag}>");
            while i < lines.len() {
                let Some((_, first)) = list_item(lines[i]) else {
                    break;
                };
                let mut item = first.to_string();
                i += 1;
                // Continuation lines: indented, not a new item or block.
                while i < lines.len()
                    && !lines[i].trim().is_empty()
                    && lines[i].starts_with([' ', '\t'])
                    && list_item(lines[i]).is_none()
                {
                    item.push(' ');
                    item.push_str(lines[i].trim());
                    i += 1;
                }
                let _ = writeln!(html, "<li>{}</li>", inline(&item));
                // A blank line between items keeps the list going.
                if i + 1 < lines.len()
                    && lines[i].trim().is_empty()
                    && list_item(lines[i + 1]).is_some()
                {
                    i += 1;
                }
            }
            let _ = writeln!(html, "</{tag}>");
        } else {
            let mut para = Vec::new();
            while i < lines.len() {
                let l = lines[i].trim();
                if l.is_empty()
                    || l.starts_with("```")
                    || l.starts_with('|')
                    || heading_level(l).is_some()
                    || list_item(lines[i]).is_some()
                {
                    break;
                }
                para.push(l);
                i += 1;
            }
            if para.len() == 1 && para[0].len() >= 3 && para[0].chars().all(|c| c == '-') {
                html.push_str("<hr>\n");
            } else {
                let _ = writeln!(html, "<p>{}</p>", inline(&para.join(" ")));
            }
        }
    }
    html
}

/// `Some((ordered, text))` for a list item line (`- x`, `* x`, `1. x`).
fn list_item(line: &str) -> Option<(bool, &str)> {
    let t = line.trim_start();
    if line.len() - t.len() > 3 {
        return None; // a continuation, not an item
    }
    if let Some(rest) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
        return Some((false, rest));
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if digits > 0
        && let Some(rest) = t[digits..].strip_prefix(". ")
    {
        return Some((true, rest));
    }
    None
}

fn split_row(row: &str) -> Vec<&str> {
    let r = row.trim();
    let r = r.strip_prefix('|').unwrap_or(r);
    let r = r.strip_suffix('|').unwrap_or(r);
    r.split('|').map(str::trim).collect()
}

fn table(rows: &[&str], inline: &dyn Fn(&str) -> String) -> String {
    let is_rule = |r: &&str| {
        split_row(r)
            .iter()
            .all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':')))
    };
    let aligns: Vec<&str> = rows
        .iter()
        .find(|r| is_rule(r))
        .map(|r| {
            split_row(r)
                .iter()
                .map(|c| match (c.starts_with(':'), c.ends_with(':')) {
                    (true, true) => "center",
                    (false, true) => "right",
                    _ => "left",
                })
                .collect()
        })
        .unwrap_or_default();
    let has_header = rows.get(1).is_some_and(is_rule);
    let mut html = String::from("<table>\n");
    for (n, row) in rows.iter().enumerate() {
        if is_rule(row) {
            continue;
        }
        let cell = if has_header && n == 0 { "th" } else { "td" };
        html.push_str("<tr>");
        for (j, c) in split_row(row).iter().enumerate() {
            let align = aligns.get(j).copied().unwrap_or("left");
            let _ = write!(
                html,
                "<{cell} style=\"text-align:{align}\">{}</{cell}>",
                inline(c)
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>\n");
    html
}

/// One line of Markdown text as HTML: inline code, bold, emphasis with `*`
/// (not `_`, which names use) and links (relative ones get `link_base` in
/// front); everything else escaped.
///
/// # Examples
///
/// ```
/// use benches::report::markdown::inline_to_html;
/// assert_eq!(
///     inline_to_html("a `<T>` in per_thread_vec, [see](x.md)", "../"),
///     "a <code>&lt;T&gt;</code> in per_thread_vec, <a href=\"../x.md\">see</a>"
/// );
/// ```
pub fn inline_to_html(text: &str, link_base: &str) -> String {
    inline_html(text, link_base)
}

fn inline_html(text: &str, link_base: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('`')
            && let Some(end) = after.find('`')
        {
            let _ = write!(out, "<code>{}</code>", esc(&after[..end]));
            rest = &after[end + 1..];
            continue;
        }
        if let Some(after) = rest.strip_prefix("**")
            && let Some(end) = after.find("**")
        {
            let _ = write!(
                out,
                "<strong>{}</strong>",
                inline_html(&after[..end], link_base)
            );
            rest = &after[end + 2..];
            continue;
        }
        if let Some(after) = rest.strip_prefix('*')
            && !after.starts_with(char::is_whitespace)
            && let Some(end) = after.find('*').filter(|&e| e > 0)
        {
            let _ = write!(out, "<em>{}</em>", inline_html(&after[..end], link_base));
            rest = &after[end + 1..];
            continue;
        }
        if let Some(after) = rest.strip_prefix('[')
            && let Some((label, target, len)) = link(after)
        {
            let href = if target.starts_with('#') || target.contains("://") {
                target.to_string()
            } else {
                format!("{link_base}{target}")
            };
            let _ = write!(
                out,
                "<a href=\"{}\">{}</a>",
                esc(&href),
                inline_html(label, link_base)
            );
            rest = &after[len..];
            continue;
        }
        let c = rest.chars().next().expect("not empty");
        out.push_str(&esc(c.encode_utf8(&mut [0; 4])));
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// After a `[`: `label](target)`, as (label, target, bytes taken).
fn link(after: &str) -> Option<(&str, &str, usize)> {
    let close = after.find("](")?;
    let label = &after[..close];
    if label.contains('[') {
        return None;
    }
    let target_start = close + 2;
    let target_len = after[target_start..].find(')')?;
    let target = &after[target_start..target_start + target_len];
    if target.contains(char::is_whitespace) {
        return None;
    }
    Some((label, target, target_start + target_len + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_blocks_of_the_profiles_file() {
        let md = "# Profiles\n\nSome text\nover lines.\n\n\
                  | scenario | ours | ratio |\n|---|---:|:-:|\n| t1 | 1,238 | 5.11 |\n\n\
                  - **arena:** item one\n  continued\n- item two\n\n\
                  ```sh\nrun <x>\n```\n\n1. first\n2. second\n";
        let html = to_html(md, "", 1);
        assert!(html.contains("<h2 id=\"profiles\">Profiles</h2>"), "{html}");
        assert!(html.contains("<p>Some text over lines.</p>"), "{html}");
        assert!(
            html.contains("<tr><th style=\"text-align:left\">scenario</th>"),
            "{html}"
        );
        assert!(
            html.contains(
                "<td style=\"text-align:right\">1,238</td><td style=\"text-align:center\">5.11</td>"
            ),
            "{html}"
        );
        assert!(
            html.contains("<li><strong>arena:</strong> item one continued</li>\n<li>item two</li>"),
            "{html}"
        );
        assert!(
            html.contains("<pre><code class=\"language-sh\">run &lt;x&gt;\n</code></pre>"),
            "{html}"
        );
        assert!(
            html.contains("<ol>\n<li>first</li>\n<li>second</li>\n</ol>"),
            "{html}"
        );
        assert!(!html.contains('|'), "{html}");
    }

    #[test]
    fn inline_markup_and_names_with_underscores() {
        assert_eq!(
            inline_html("`a*b` and per_thread_vec_bound, *x* [s](#t8)", "B/"),
            "<code>a*b</code> and per_thread_vec_bound, <em>x</em> <a href=\"#t8\">s</a>"
        );
        assert_eq!(
            inline_html("[`results/`](results/) <b>", "/r/"),
            "<a href=\"/r/results/\"><code>results/</code></a> &lt;b&gt;"
        );
        // A lone star, as in `2 * 3`, stays a star.
        assert_eq!(inline_html("2 * 3", ""), "2 * 3");
    }

    #[test]
    fn dropped_sections_end_at_the_next_section() {
        let md = "# P\n\n## Engine against X\n\n### t8\n\n```\n## not a heading\n```\n\n## Primitives\n\n- a\n";
        let kept = drop_sections(md, |t| t.starts_with("Engine"));
        assert_eq!(kept, "# P\n\n## Primitives\n\n- a\n");
    }
}
