//! `cargo xtask book`: build the cookbook with mdBook and read it in a real
//! headless browser: every page renders, every internal link resolves, every
//! image loads, no code block is empty, no table is wider than the page at
//! 1280 px. Keeps a screenshot of one page.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};

/// mdBook, pinned; installed into target/tools from crates.io when missing.
const MDBOOK_VERSION: &str = "0.4.52";
/// The page whose screenshot is kept.
const SCREENSHOT_PAGE: &str = "scenarios/missing-free.html";

#[derive(clap::Args)]
pub struct Args {
    /// Only build the book; do not open it in a browser.
    #[arg(long)]
    no_browser: bool,
}

/// Why there is no browser on this machine, as the closing line says it.
const NO_CHROMIUM: &str = "no chromium installed; apt-get install chromium";

/// The book step of `cargo xtask test`: the browser check runs where a
/// browser is installed; without one it is skipped, and the closing line
/// says so and why, except under CI, where it is required.
pub fn check_for_tests() -> anyhow::Result<()> {
    eprintln!("== book: mdbook build and browser check");
    match find_browser() {
        Some(browser) => check(Ok(&browser)).map(|_| ()),
        None if std::env::var_os("CI").is_some() => {
            bail!("CI is set and {NO_CHROMIUM}")
        }
        None => check(Err(NO_CHROMIUM)).map(|_| ()),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.no_browser {
        return check(Err("--no-browser"));
    }
    let browser = find_browser().context(
        "no chromium found: install Debian's `chromium` (apt-get install chromium), or pass --no-browser",
    )?;
    check(Ok(&browser))
}

/// Builds the book and checks its links, then, with a browser, every page
/// in it; without one (`Err` says why), says that part was skipped.
fn check(browser: Result<&Path, &str>) -> anyhow::Result<ExitCode> {
    let root = crate::project::root();
    let mdbook = ensure_mdbook(&root)?;
    let built = Command::new(&mdbook)
        .arg("build")
        .arg(root.join("docs"))
        .output()?;
    if !built.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&built.stderr));
        bail!("mdbook build failed");
    }
    let book = root.join("docs/book");
    let pages = chapter_pages(&root)?;
    let mut problems = check_links(&book)?;
    if let Ok(browser) = browser {
        let profile = tempfile_dir()?;
        for page in &pages {
            problems.extend(check_page(browser, &profile, &book, page)?);
        }
        problems.extend(explain_parity(&root, browser, &profile, &book)?);
        let shots = root.join("target/book-check");
        std::fs::create_dir_all(&shots)?;
        let shot = shots.join("missing-free.png");
        let status = browser_cmd(browser, &profile)
            .arg(format!("--screenshot={}", shot.display()))
            .arg("--window-size=1280,1600")
            .arg(file_url(&book.join(SCREENSHOT_PAGE)))
            .status()?;
        if !status.success() || !shot.is_file() {
            problems.push(format!("no screenshot of {SCREENSHOT_PAGE}"));
        } else {
            println!("screenshot: {}", shot.display());
        }
        let _ = std::fs::remove_dir_all(&profile);
    }
    if problems.is_empty() {
        println!("{}", summary(pages.len(), browser.err()));
        println!("book: written to {}", book.join("index.html").display());
        return Ok(ExitCode::SUCCESS);
    }
    for p in &problems {
        eprintln!("book: {p}");
    }
    bail!("{} problem(s) in the built book", problems.len())
}

/// The closing line: what was checked, and what was not and why.
fn summary(pages: usize, browser_skipped: Option<&str>) -> String {
    match browser_skipped {
        None => {
            format!(
                "book: {pages} pages render, links resolve, images load, code blocks have text, \
                 tables fit {READER_WIDTH} px"
            )
        }
        Some(why) => format!(
            "book: {pages} pages built, links resolve; the browser check was skipped ({why}), \
             so whether pages render, images load, code blocks have text and tables fit was not \
             checked"
        ),
    }
}

fn ensure_mdbook(root: &Path) -> anyhow::Result<PathBuf> {
    let local = root.join("target/tools/bin/mdbook");
    if local.is_file() {
        return Ok(local);
    }
    eprintln!(
        "installing mdbook {MDBOOK_VERSION} from crates.io into target/tools (first time only)"
    );
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["install", "--quiet", "--locked", "--root"])
        .arg(root.join("target/tools"))
        .args(["mdbook", "--version", MDBOOK_VERSION])
        .status()?;
    if !status.success() || !local.is_file() {
        bail!("could not install mdbook {MDBOOK_VERSION}");
    }
    Ok(local)
}

/// The HTML page of every chapter in SUMMARY.md.
fn chapter_pages(root: &Path) -> anyhow::Result<Vec<String>> {
    let summary = std::fs::read_to_string(root.join("docs/src/SUMMARY.md"))?;
    Ok(summary
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|md| md.trim_end_matches(".md").to_owned() + ".html")
        .collect())
}

/// Every relative href and src in the built pages points at a file.
fn check_links(book: &Path) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    let mut stack = vec![book.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "html") {
                continue;
            }
            let html = std::fs::read_to_string(&path)?;
            for attr in ["href=\"", "src=\""] {
                for target in html.split(attr).skip(1).filter_map(|r| r.split('"').next()) {
                    let target = target.split(['#', '?']).next().unwrap_or("");
                    let external = target.contains("://")
                        || target.starts_with("mailto:")
                        || target.starts_with("data:");
                    if target.is_empty() || external {
                        continue;
                    }
                    if !path.parent().unwrap_or(book).join(target).exists() {
                        problems.push(format!(
                            "{}: broken link {target}",
                            path.strip_prefix(book)?.display()
                        ));
                    }
                }
            }
        }
    }
    Ok(problems)
}

fn check_page(
    browser: &Path,
    profile: &Path,
    book: &Path,
    page: &str,
) -> anyhow::Result<Vec<String>> {
    // A reader's window: 1280 px wide at the default zoom, where a table
    // wider than the page hides its last columns.
    let out = browser_cmd(browser, profile)
        .arg("--virtual-time-budget=5000")
        .arg(format!("--window-size={READER_WIDTH},900"))
        .arg("--force-device-scale-factor=1")
        .arg("--dump-dom")
        .arg(file_url(&book.join(page)))
        .output()?;
    let dom = String::from_utf8_lossy(&out.stdout);
    let attr = |name: &str| {
        dom.split(&format!("{name}=\""))
            .nth(1)
            .and_then(|r| r.split('"').next())
            .map(str::to_owned)
    };
    let mut problems = Vec::new();
    if attr("data-checked").as_deref() != Some("yes") || !dom.contains("<main>") {
        problems.push(format!(
            "{page}: did not render (no checked <main> in the browser's DOM)"
        ));
        return Ok(problems);
    }
    if attr("data-broken-images").as_deref() != Some("0") {
        problems.push(format!(
            "{page}: {} image(s) did not load",
            attr("data-broken-images").unwrap_or_default()
        ));
    }
    if attr("data-empty-code-blocks").as_deref() != Some("0") {
        problems.push(format!(
            "{page}: {} empty code block(s)",
            attr("data-empty-code-blocks").unwrap_or_default()
        ));
    }
    problems.extend(overflow_problem(
        page,
        attr("data-overflowing-tables").as_deref(),
        attr("data-overflowing-table-headers").as_deref(),
    ));
    Ok(problems)
}

/// The width of the window the pages are read in, in CSS pixels.
const READER_WIDTH: u32 = 1280;

/// A page with a table wider than the page at [`READER_WIDTH`], as
/// checks.js counted them (with each such table's header row).
fn overflow_problem(page: &str, count: Option<&str>, headers: Option<&str>) -> Option<String> {
    match count {
        Some("0") => None,
        Some(n) => Some(format!(
            "{page}: {n} table(s) wider than the page at {READER_WIDTH} px, their last columns \
             out of sight: {}",
            headers.unwrap_or_default()
        )),
        None => Some(format!("{page}: its tables were not measured")),
    }
}

/// The page that answers a pasted error in the browser.
const EXPLAIN_PAGE: &str = "paste-your-error.html";

/// The "Paste your error" page must give the first three answers that
/// `casebook-explain` gives, in the same order, for every held-out text and
/// every indexed text: it runs the page's self-test in the browser and the
/// binary's here, and compares them line by line.
fn explain_parity(
    root: &Path,
    browser: &Path,
    profile: &Path,
    book: &Path,
) -> anyhow::Result<Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let cli = Command::new(cargo)
        .args([
            "run",
            "--quiet",
            "--package",
            "casebook-explain",
            "--",
            "--index",
        ])
        .arg(root.join("docs/src/explain/index.json"))
        .arg("--selftest")
        .arg(root.join("crates/explain/tests/texts.toml"))
        .current_dir(root)
        .output()?;
    if !cli.status.success() {
        bail!(
            "casebook-explain --selftest failed: {}",
            String::from_utf8_lossy(&cli.stderr)
        );
    }
    let expected: Vec<String> = String::from_utf8_lossy(&cli.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let out = browser_cmd(browser, profile)
        .arg("--virtual-time-budget=30000")
        .arg("--dump-dom")
        .arg(format!("{}#selftest", file_url(&book.join(EXPLAIN_PAGE))))
        .output()?;
    let dom = String::from_utf8_lossy(&out.stdout);
    let got: Vec<String> = dom
        .split("<pre id=\"selftest\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .map(|t| t.lines().map(str::to_owned).collect())
        .unwrap_or_default();
    Ok(parity_problems(&expected, &got))
}

fn parity_problems(expected: &[String], got: &[String]) -> Vec<String> {
    if got.is_empty() {
        return vec![format!("{EXPLAIN_PAGE}: its self-test wrote nothing")];
    }
    let mut problems: Vec<String> = expected
        .iter()
        .zip(got)
        .filter(|(e, g)| e != g)
        .take(5)
        .map(|(e, g)| {
            format!("{EXPLAIN_PAGE}: the page answers `{g}` where casebook-explain answers `{e}`")
        })
        .collect();
    if expected.len() != got.len() {
        problems.push(format!(
            "{EXPLAIN_PAGE}: the page ranked {} texts, casebook-explain {}",
            got.len(),
            expected.len()
        ));
    }
    problems
}

fn browser_cmd(browser: &Path, profile: &Path) -> Command {
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .stderr(std::process::Stdio::null());
    cmd
}

fn find_browser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

fn tempfile_dir() -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("casebook-browser-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

#[cfg(test)]
mod tests {
    use super::{parity_problems, summary};

    #[test]
    fn the_page_and_the_cli_must_answer_alike() {
        let lines = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let cli = lines(&["h0 sticky-error,late-error", "h1 "]);
        assert!(parity_problems(&cli, &cli).is_empty());
        let swapped = lines(&["h0 late-error,sticky-error", "h1 "]);
        assert_eq!(parity_problems(&cli, &swapped).len(), 1);
        assert_eq!(
            parity_problems(&cli, &lines(&["h0 sticky-error,late-error"])).len(),
            1
        );
        assert_eq!(parity_problems(&cli, &[]).len(), 1);
    }

    #[test]
    fn a_table_wider_than_the_page_fails_the_page() {
        use super::overflow_problem;
        assert_eq!(overflow_problem("claims.html", Some("0"), Some("")), None);
        let problem = overflow_problem("fleet.html", Some("1"), Some("trial | H100")).unwrap();
        assert!(problem.starts_with("fleet.html: 1 table(s) wider than the page at 1280 px"));
        assert!(problem.ends_with("trial | H100"), "{problem}");
        assert!(overflow_problem("x.html", None, None).is_some());
    }

    #[test]
    fn a_skipped_browser_check_is_said_with_its_reason() {
        let line = summary(26, Some(super::NO_CHROMIUM));
        assert!(
            line.contains("the browser check was skipped (no chromium installed;"),
            "{line}"
        );
        assert!(!line.starts_with("book: 26 pages render"), "{line}");
        assert_eq!(
            summary(26, None),
            "book: 26 pages render, links resolve, images load, code blocks have text, tables fit \
             1280 px"
        );
    }
}
