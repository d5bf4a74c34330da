//! From a pasted text to the features it is matched on.
//!
//! The same steps run in the book's "Paste your error" page
//! (`docs/src/explain/explain.js`), which the book check holds to the same
//! answers. Change one, change the other.
//!
//! 1. Python traceback frames (`File "…", line N, in f` and the code line
//!    under it) and lines of only `^` and `~` are dropped: they name the
//!    user's code, not the error.
//! 2. The text is cut into lines, and each line into words at whitespace. A chunk holding `/` or `\`
//!    (a path, an address) or naming a source file (`enqueue.cc:52`) is dropped; the rest is split into runs of
//!    letters, digits and `_`. A word holding a digit is a figure (a size, a
//!    device index, a pointer, a line number) and is dropped, unless it is a
//!    CUDA call's name ([`is_api_name`]: `cudaMemcpy2D`,
//!    `cuDevicePrimaryCtxReset_v2`). Each dropped
//!    chunk or figure, and each line's end, is a break: no phrase spans it.
//! 3. The sentences frameworks append to every CUDA error (PyTorch's
//!    "CUDA kernel errors might be asynchronously reported …") are removed,
//!    word for word, and leave a break. What users write for "out of
//!    memory" ("OOMs", "ran out of GPU RAM", "memory was out") is read as
//!    those three words ([`out_of_memory_in_words`]).
//! 4. Features: every identifier (a word with `_` inside, or camelCase) that
//!    is not a generic one (`RuntimeError`), as `id:<word>`; and every three
//!    consecutive words without a break, lowercased, as `w:<a> <b> <c>`, and
//!    two words alone between breaks as `w:<a> <b>`, where the phrase says
//!    what failed ([`specific`]: a word that is neither generic nor an
//!    English function word, two such where it holds a function word); a
//!    pasted text gives every two consecutive words as `w:<a> <b>` too
//!    ([`Reading`]).
//! 5. What the figures of an out-of-memory message say, read before they
//!    are dropped ([`figures`]): the request is larger than the whole GPU;
//!    the memory is there but in pieces; another process holds it; this
//!    process's own tensors fill the GPU. The message's frame around its
//!    figures ("total capacity", "already allocated", …) is the same
//!    whatever the cause, and is removed as boilerplate (step 3). A unit
//!    after a figure ("2.00 GiB") is part of the figure.
//! 6. The numbers of the driver's Xid reports, read before they are
//!    dropped ([`xids`]): `xid:48`, an error's name.

use std::collections::BTreeSet;

/// Words every CUDA error has, whatever its cause: a phrase of only these
/// (and [`FUNCTION_WORDS`]) is no feature.
pub const GENERIC_WORDS: &[&str] = &[
    "call",
    "cuda",
    "device",
    "driver",
    "error",
    "errors",
    "exception",
    "failed",
    "failure",
    "file",
    "gpu",
    "invalid",
    "line",
    "no",
    "not",
    // The vendor and its tool: every GPU user's report names them
    // (`nvidia-smi` shows memory, processes, versions), whatever failed.
    "nvidia",
    "nvrm",
    "please",
    // What a pull request's title says it does ("Fix OOM …", "[Bugfix]"),
    // whatever it fixes.
    "bugfix",
    "fix",
    "fixes",
    // The checking tools' banners ("========= CUDA-MEMCHECK", "=========
    // COMPUTE-SANITIZER"): they say which tool ran, not what it found.
    "memcheck",
    "sanitizer",
    // How a process that died says so ("Aborted (core dumped)"), whatever
    // killed it.
    "aborted",
    "core",
    "dumped",
    "runtime",
    "runtimeerror",
    "see",
    "set",
    "smi",
    "system",
    "torch",
    // Triton's wrapper of whatever the driver returned ("Triton Error
    // [CUDA]: invalid device context", "Triton Error [CUDA]: invalid
    // argument"): the framework's name, as "torch" is.
    "triton",
    "try",
    "unhandled",
    "use",
    "using",
    // Python's and C's truth values, in every setting printed or advised
    // (`pin_memory=False`, `expandable_segments:True`): they say which way
    // a setting is, not what failed.
    "true",
    "false",
];

/// Pairs of words that say what failed in no report more than in another:
/// "memory usage" is what every report of memory speaks of, whatever holds
/// it. Where a phrase's only words that are neither generic nor function
/// words are such a pair, the phrase is no feature ([`specific`]), and the
/// pair is none of a case's pairs ([`content_pairs`]).
pub const GENERIC_PHRASES: &[&str] = &[
    "memory usage",
    // How a tool's advice begins ("Make sure that the latest NVIDIA driver is
    // installed and running", "make sure you have enough memory"), whatever
    // it advises.
    "make sure",
    // What every error getter returns (cudaGetLastError, cudaPeekAtLastError,
    // NCCL's "Last error:" line), whatever the error was.
    "last error",
];

/// The words that hold an English sentence together: articles, pronouns,
/// the forms of be, have and do, modal verbs, conjunctions and the
/// commonest prepositions. A phrase that holds one is a piece of a
/// sentence, and says what failed only through its other words: it is a
/// feature only where two of those are neither generic nor such words
/// ([`specific`]). "was compiled with", "do you have" and "failed to
/// allocate" are then no features, "tried to allocate" and "out of memory"
/// are.
pub const FUNCTION_WORDS: &[&str] = &[
    "a", "about", "after", "am", "an", "and", "are", "as", "at", "be", "before", "been", "being",
    "but", "by", "can", "cannot", "could", "did", "do", "does", "for", "from", "had", "has",
    "have", "having", "he", "her", "his", "i", "if", "in", "into", "is", "it", "its", "may", "me",
    "might", "must", "my", "nor", "of", "on", "or", "our", "shall", "she", "should", "so", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "us",
    "was", "we", "were", "what", "when", "where", "which", "who", "will", "with", "would", "you",
    "your",
    // The commonest prepositions beyond those above: "out of memory during
    // startup" says what "out of memory" says, wherever it happened.
    "across", "among", "between", "during", "per", "since", "through", "until", "upon", "via",
    "while", "within",
    // The pieces of a contraction, which the apostrophe splits ("shouldn't"
    // is "shouldn" and "t"): the same auxiliaries, negated or shortened.
    // Not "re" ("they're"): as a prefix ("re-initialize") it is a word's.
    "ain", "aren", "couldn", "d", "didn", "doesn", "don", "hadn", "hasn", "haven", "isn", "ll", "m",
    "mightn", "mustn", "needn", "s", "shan", "shouldn", "t", "ve", "wasn", "weren", "won",
    "wouldn",
    // The letters of "e.g." and "i.e.", which the full stops split: they
    // introduce an example, whatever it is of.
    "e", "g",
    // C's type words, which a kernel's signature spells out in the reports
    // of compute-sanitizer, cuda-gdb and a device-side assert
    // ("FWrem_64(int *, int, int *, int, int)"): they say what the
    // program's own function takes, not what failed.
    "bool", "char", "const", "double", "float", "int", "long", "short", "unsigned", "void",
];

/// Identifiers every framework error carries, whatever the cause: generic
/// exception names, and the names of CUDA's libraries, which say where an
/// error came from, not what it is (the library's status names do).
pub const GENERIC_IDENTIFIERS: &[&str] = &[
    "cublas",
    "cudnn",
    "cufft",
    "curand",
    "cusolver",
    "cusparse",
    "tensorrt",
    "runtimeerror",
    "acceleratorerror",
    "valueerror",
    "typeerror",
    "exception",
    // Julia's wrapper around whatever a script raised ("ERROR: LoadError:
    // CUDA error: …", "ERROR: LoadError: Number of threads per block …").
    "loaderror",
    // Thrust's wrapper of whatever error its kernel met ("parallel_for
    // failed: an illegal memory access …", "parallel_for failed:
    // cudaErrorInvalidDeviceFunction"), PyTorch's and every Thrust user's.
    "parallel_for",
    // What C++ allocators throw for any failed allocation (RMM's memory
    // resources for every CUDA error they meet, out of memory or not).
    "bad_alloc",
    "cuda_launch_blocking",
    "torch_use_cuda_dsa",
    "nccl_debug",
    "distbackenderror",
    // Success codes: a check that compares a result with one names no
    // error ("Check failed: error == cudaSuccess").
    "cudasuccess",
    "cuda_success",
    "cublas_status_success",
    "cudnn_status_success",
    "ncclsuccess",
    "nvml_success",
    // The result types that every error is a value of, as bindings print
    // them (Julia's `CUDA.cudaError_enum`).
    "cudaerror_enum",
    "cudaerror_t",
    "curesult",
    "cublasstatus_t",
    "cudnnstatus_t",
    "ncclresult_t",
    // Error-checking macros and wrappers: they print every error that
    // passes through them, whatever it is.
    "thcudacheck",
    "c10_cuda_check",
    "cuda_check",
    "check_cuda",
    "cudacheck",
    "cudacheckerror",
    "checkcudaerrors",
    "cuda_safe_call",
    "cutilsafecall",
    "gpuerrchk",
    "cuda_call",
    // The calls every CUDA program makes, runtime and driver: a text that
    // names one says where its error surfaced (a copy returns a kernel's
    // fault), not which failure it is, as "CUDA" does not.
    "cudamalloc",
    "cudamemcpy",
    "cudafree",
    "cumemalloc",
    "cumemalloc_v2",
    "cumemfree",
    "cumemfree_v2",
    "cumemcpy",
    "cumemcpy_v2",
    "cumemcpyhtod",
    "cumemcpyhtod_v2",
    "cumemcpydtoh",
    "cumemcpydtoh_v2",
    "cumemcpydtod",
    "cumemcpydtod_v2",
];

/// Sentences appended to every error of their kind, removed before
/// matching: they say how to debug, not what went wrong.
pub const BOILERPLATE: &[&str] = &[
    "CUDA kernel errors might be asynchronously reported at some other API call, so the \
     stacktrace below might be incorrect.",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "Compile with TORCH_USE_CUDA_DSA to enable device-side assertions.",
    "Device-side assertion tracking was not enabled by user.",
    "Traceback (most recent call last):",
    // The frame of every c10::Error PyTorch's C++ raises, before its stack:
    // "Exception raised from <function> at <file>:<line> (most recent call
    // first):". The function's name stays.
    "Exception raised from",
    "(most recent call first):",
    // PyTorch's suffix to a warning its C++ raised: "(Triggered internally at
    // <file>:<line>.)".
    "Triggered internally at",
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
    "If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.",
    "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
    "See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
    // The frame of PyTorch's out-of-memory message around its figures:
    // the same for every cause; what the figures say is read apart
    // ([`figures`]). 2.x, then 1.4 to 1.13, then 0.4 to 1.3.
    "GPU has a total capacity of of which is free.",
    "Process has memory in use.",
    "Including non-PyTorch memory, this process has memory in use.",
    "Of the allocated memory is allocated by PyTorch, and is reserved by PyTorch but unallocated.",
    "GPU total capacity; already allocated; free; reserved in total by PyTorch)",
    "GPU total capacity; already allocated; free; cached)",
    "GPU total capacity; already allocated; free; cache)",
    "See documentation for Memory Management",
    "terminate called after throwing an instance of",
    // glog's CHECK around a CUDA call (Caffe, MXNet): the same frame for
    // every error.
    "Check failed: error == cudaSuccess",
    "Check failed: e == cudaSuccess",
    "Check failure stack trace:",
    // PyTorch's frame around every NCCL error.
    "NCCL error in:",
    "NCCL version",
    // NCCL's frame around every error it reports, as PyTorch raises it.
    "run with NCCL_DEBUG=INFO for details",
    "run with NCCL_DEBUG=WARN for details",
    "This usually reflects invalid usage of NCCL library.",
    // NCCL's log levels, before every line it logs.
    "NCCL INFO",
    "NCCL WARN",
    // TensorRT's logger before every error it logs, whatever failed:
    // "[reformat.cu::operator()::1606] Error Code 1: Cuda Runtime (…)".
    "Error Code",
    // PyTorch's warning before every reason CUDA could not start ("CUDA
    // initialization: The NVIDIA driver on your system is too old", "…:
    // Unexpected error from cudaGetDeviceCount()"), from Python and C++.
    "UserWarning: CUDA initialization:",
    "Warning: CUDA initialization:",
    // The prefix PyTorch and most frameworks put before every CUDA error's
    // own words ("CUDA error: an illegal memory access was encountered").
    "CUDA error",
    // PyTorch 2.x: "Search for `cudaErrorAssert' in <the runtime's docs> for
    // more information." The error's name in it stays.
    "Search for",
    "for more information.",
    // onnxruntime's frame around every error a node of the graph raised:
    // "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code
    // returned while running Add node. Name:'…' Status Message: <the
    // error's own words>".
    "Non-zero status code returned while running",
    "Status Message:",
    // The frame of the driver's Xid report in the kernel's log: "NVRM: Xid
    // (PCI:0000:07:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen
    // off the bus." Its number is read apart ([`xids`]); the process is
    // whichever ran, or none.
    "NVRM: Xid (PCI:",
    "NVRM: Xid",
    "pid='<unknown>', name=<unknown>,",
];

/// One word of a text, or a break where a figure, a path or removed
/// boilerplate was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    Word(String),
    Break,
}

/// Whether a line is a frame of compute-sanitizer's report: where the
/// access was (`at kernel(const float *, int)+0x70 in file.cu:94`), by
/// which thread, the device's frames and the host's backtrace. The report's own lines ("Invalid
/// __shared__ read of size 16 bytes", "Address 0x10a8 is misaligned") are
/// kept.
fn sanitizer_frame(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix("=========") else {
        return false;
    };
    let rest = rest.trim_start_matches('=').trim_start();
    [
        "at ",
        "by thread",
        "Device Frame",
        "Host Frame",
        "in ",
        "Saved host backtrace",
    ]
    .iter()
    .any(|frame| rest.starts_with(frame))
}

/// Drops traceback frames (Python's, compute-sanitizer's) and caret lines
/// (step 1).
pub fn without_frames(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        if trimmed.starts_with("File \"") && trimmed.contains("\", line ") {
            let indent = line.len() - trimmed.len();
            let next = lines.get(i + 1).copied().unwrap_or("");
            let next_trimmed = next.trim_start();
            let next_indent = next.len() - next_trimmed.len();
            let code_line = !next_trimmed.is_empty()
                && next_indent > indent
                && !next_trimmed.starts_with("File \"");
            i += if code_line { 2 } else { 1 };
            continue;
        }
        if (!trimmed.is_empty() && trimmed.chars().all(|c| matches!(c, '^' | '~' | ' ')))
            || sanitizer_frame(line)
        {
            i += 1;
            continue;
        }
        kept.push(line);
        i += 1;
    }
    kept
}

/// The extensions of source files: a chunk that names one
/// (`math_functions.cu:79]`, `[multiproc_worker_utils.py:238]`) says where
/// a program printed the error, as a path does, not what the error is.
pub const SOURCE_EXTENSIONS: &[&str] = &[
    "c", "cc", "cpp", "cxx", "cu", "cuh", "h", "hh", "hpp", "hxx", "py", "pyx", "rs", "go", "java",
    "js",
];

/// Whether a chunk of a line names a source file, with or without the line
/// after a colon and punctuation around it.
fn names_a_source_file(chunk: &str) -> bool {
    let name = chunk
        .trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .split(':')
        .next()
        .unwrap_or("");
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && SOURCE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
    })
}

/// A chunk with the module path before an exception's name dropped:
/// `torch.distributed.DistBackendError:` is `DistBackendError:`,
/// `cupy.cuda.runtime.CUDARuntimeError(…` is `CUDARuntimeError(…`. The path
/// says where the framework keeps the exception, not what failed, and two
/// errors of one module share it.
fn without_module_path(chunk: &str) -> &str {
    let dotted = chunk
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(chunk.len());
    let Some((_, last)) = chunk[..dotted].rsplit_once('.') else {
        return chunk;
    };
    let exception = ["Error", "Exception", "Warning"]
        .iter()
        .any(|e| last.len() > e.len() && last.ends_with(e));
    if exception {
        &chunk[dotted - last.len()..]
    } else {
        chunk
    }
}

/// The words of one line, with breaks (step 2).
pub fn line_tokens(line: &str) -> Vec<Token> {
    let mut out = Vec::new();
    for chunk in line.split_whitespace() {
        if chunk.contains('/') || chunk.contains('\\') || names_a_source_file(chunk) {
            out.push(Token::Break);
            continue;
        }
        let chunk = without_module_path(chunk);
        let mut word = String::new();
        for c in chunk.chars().chain(std::iter::once(' ')) {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
            } else if !word.is_empty() {
                let w = std::mem::take(&mut word);
                // A CUDA call's name keeps its digits (`cudaMemcpy2D`,
                // `cuDevicePrimaryCtxReset_v2`): they are part of the name.
                let figure = w.chars().any(|c| c.is_ascii_digit()) && !is_api_name(&w);
                // A unit after a figure is part of it: "2.00 GiB".
                let unit_of_figure = unit(&w).is_some() && out.last() == Some(&Token::Break);
                if figure || unit_of_figure {
                    out.push(Token::Break);
                } else {
                    out.push(Token::Word(driver_error_name(&w).unwrap_or(w)));
                }
            }
        }
    }
    out
}

/// The driver's error name as other bindings spell it, in the driver's
/// own spelling: managedCuda's `ErrorInvalidContext` and CUDA.jl's
/// `ERROR_INVALID_CONTEXT` are `CUDA_ERROR_INVALID_CONTEXT`. The same
/// error under another binding is the same feature.
pub fn driver_error_name(word: &str) -> Option<String> {
    if let Some(rest) = word.strip_prefix("ERROR_") {
        let upper_snake = rest.chars().all(|c| c.is_ascii_uppercase() || c == '_');
        return (upper_snake && rest.len() > 1 && !rest.starts_with('_'))
            .then(|| format!("CUDA_ERROR_{rest}"));
    }
    let rest = word.strip_prefix("Error")?;
    // Two humps or more after "Error" (`ErrorInvalidContext`,
    // `ErrorOutOfMemory`), letters only: one is a word (`Errors`).
    let humps = rest.chars().filter(char::is_ascii_uppercase).count();
    let letters = rest.chars().all(|c| c.is_ascii_alphabetic());
    if humps < 2 || !letters || !rest.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    let mut snake = String::from("CUDA_ERROR");
    for c in rest.chars() {
        if c.is_ascii_uppercase() {
            snake.push('_');
        }
        snake.push(c.to_ascii_uppercase());
    }
    Some(snake)
}

/// Every token of a text (steps 1 to 3), each line ending in a break: a
/// phrase never spans two lines (boilerplate, matched word by word across
/// breaks, may).
pub fn tokens(text: &str) -> Vec<Token> {
    let mut all = Vec::new();
    for line in without_frames(text) {
        all.extend(line_tokens(line));
        all.push(Token::Break);
    }
    out_of_memory_in_words(remove_boilerplate(all))
}

/// Abbreviations users write for "out of memory" ("subsequent OOMs", "an
/// OOM error"): read as the three words.
pub const OUT_OF_MEMORY_ABBREVIATIONS: &[&str] = &["oom", "ooms"];

/// The words for the memory that ran out: "out of GPU RAM" is "out of
/// memory".
pub const MEMORY_WORDS: &[&str] = &["memory", "ram", "vram"];

/// Words that say whose memory ran out, between "out of" and the memory
/// ("out of GPU memory", "out of CUDA memory"): dropped there.
pub const MEMORY_QUALIFIERS: &[&str] = &["gpu", "cuda", "device", "video", "graphics"];

/// The verbs between a memory and "out" ("the memory ran out", "GPU ram
/// was out", "memory has run out"): such a clause is "out of memory".
pub const RUNNING_OUT_WORDS: &[&str] = &[
    "is", "was", "has", "had", "have", "ran", "run", "runs", "running", "went", "goes", "got",
];

/// The words that deny an out-of-memory right before it ("This is not OOM",
/// "no OOM", "it isn't an OOM"; "isn't" is split at its apostrophe), with at
/// most one article between.
pub const OUT_OF_MEMORY_DENIALS: &[&str] = &["not", "never", "t", "no"];

/// Step 3, last: the ways a text says "out of memory" in other words, read as
/// those three words, so that a user's "OOMs" or "ran out of GPU RAM" shares
/// the phrase of the message every out-of-memory case holds. A case's texts
/// are read the same way. An out-of-memory the text denies ("This is not
/// OOM — VRAM sits at 68%") is no such phrase: it leaves a break.
pub fn out_of_memory_in_words(tokens: Vec<Token>) -> Vec<Token> {
    let lower = |t: &Token| match t {
        Token::Word(w) => w.to_ascii_lowercase(),
        Token::Break => String::new(),
    };
    let is =
        |t: Option<&Token>, list: &[&str]| t.is_some_and(|t| list.contains(&lower(t).as_str()));
    let out_of_memory = || {
        ["out", "of", "memory"]
            .iter()
            .map(|w| Token::Word((*w).to_owned()))
            .collect::<Vec<_>>()
    };
    // The phrase, where the words just read do not deny it (a denial, or a
    // denial and an article); a break where they do.
    let said = |out: &mut Vec<Token>| {
        let mut back = out.iter().rev();
        let last = back.next();
        let denied = if is(last, &["a", "an"]) {
            is(back.next(), OUT_OF_MEMORY_DENIALS)
        } else {
            is(last, OUT_OF_MEMORY_DENIALS)
        };
        if denied {
            out.push(Token::Break);
        } else {
            out.extend(out_of_memory());
        }
    };
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        let at = |k: usize| tokens.get(i + k);
        if is(at(0), OUT_OF_MEMORY_ABBREVIATIONS) {
            said(&mut out);
            i += 1;
            continue;
        }
        // "out of [GPU] RAM"
        if is(at(0), &["out"]) && is(at(1), &["of"]) {
            let qualified = usize::from(is(at(2), MEMORY_QUALIFIERS));
            if is(at(2 + qualified), MEMORY_WORDS) {
                said(&mut out);
                i += 3 + qualified;
                continue;
            }
        }
        // "[the] memory ran out", "RAM was out", "memory has run out", not
        // followed by "of" ("memory is out of sync").
        if is(at(0), MEMORY_WORDS) {
            let verbs = (1..=2)
                .take_while(|&k| is(at(k), RUNNING_OUT_WORDS))
                .count();
            if verbs > 0 && is(at(1 + verbs), &["out"]) && !is(at(2 + verbs), &["of"]) {
                out.extend(out_of_memory());
                i += 2 + verbs;
                continue;
            }
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    out
}

fn remove_boilerplate(tokens: Vec<Token>) -> Vec<Token> {
    let sentences: Vec<Vec<String>> = BOILERPLATE
        .iter()
        .map(|s| {
            line_tokens(s)
                .into_iter()
                .filter_map(|t| match t {
                    Token::Word(w) => Some(w.to_ascii_lowercase()),
                    Token::Break => None,
                })
                .collect()
        })
        .collect();
    // Positions of the words, breaks skipped: boilerplate matches across a
    // figure (`CUDA_LAUNCH_BLOCKING=1`).
    let words: Vec<(usize, String)> = tokens
        .iter()
        .enumerate()
        .filter_map(|(i, t)| match t {
            Token::Word(w) => Some((i, w.to_ascii_lowercase())),
            Token::Break => None,
        })
        .collect();
    let mut removed = vec![false; tokens.len()];
    let mut k = 0;
    while k < words.len() {
        let hit = sentences.iter().find(|s| {
            !s.is_empty()
                && k + s.len() <= words.len()
                && s.iter().zip(&words[k..]).all(|(a, (_, b))| a == b)
        });
        match hit {
            Some(s) => {
                for (i, _) in &words[k..k + s.len()] {
                    removed[*i] = true;
                }
                k += s.len();
            }
            None => k += 1,
        }
    }
    let mut out = Vec::with_capacity(tokens.len());
    for (i, t) in tokens.into_iter().enumerate() {
        if removed[i] {
            if out.last() != Some(&Token::Break) {
                out.push(Token::Break);
            }
        } else {
            out.push(t);
        }
    }
    out
}

/// The prefixes of the error names of CUDA and its libraries, lowercased.
pub const ERROR_NAME_PREFIXES: &[&str] = &[
    "cuda_error_",
    "cudaerror",
    "cublas_status_",
    "cudnn_status_",
    "cusolver_status_",
    "cusparse_status_",
    "curand_status_",
    "cufft_",
    "nvml_error_",
    // NCCL's results (ncclInvalidUsage, ncclSystemError, …), not every name
    // that starts with nccl (NCCL_DEBUG, ncclCommInitRank).
    "ncclunhandled",
    "ncclsystemerror",
    "ncclinternalerror",
    "ncclinvalid",
    "ncclremoteerror",
];

/// Whether a feature is an error's name (`id:cuda_error_out_of_memory`),
/// or the number of the driver's Xid report (`xid:79`, [`xids`]).
pub fn is_error_name(feature: &str) -> bool {
    if feature.starts_with("xid:") {
        return true;
    }
    feature.strip_prefix("id:").is_some_and(|w| {
        ERROR_NAME_PREFIXES.iter().any(|p| w.starts_with(p)) && !GENERIC_IDENTIFIERS.contains(&w)
    })
}

/// Whether a feature is a name and no more (`id:cublas_gemm`, a function's
/// or a kernel's): an identifier that is neither an error's name
/// ([`is_error_name`]) nor an exception's (`OutOfMemoryError`,
/// `CudaAPIError`, `MemoryException`).
pub fn is_bare_name(feature: &str) -> bool {
    feature.strip_prefix("id:").is_some_and(|w| {
        !is_error_name(feature) && !w.ends_with("error") && !w.ends_with("exception")
    })
}

/// A word with `_` between letters, or camelCase: an API's name for a
/// thing (`CUDA_ERROR_OUT_OF_MEMORY`, `cudaErrorAssert`, `OutOfMemoryError`).
/// camelCase means a lowercase start with a capital after it (`cudaMalloc`),
/// or two humps or more (`OutOfResources`): one hump is a name or a plain
/// exception (`PyTorch`, `RuntimeError`), no API's word.
pub fn is_identifier(word: &str) -> bool {
    let bytes = word.as_bytes();
    let inner_underscore = word.trim_matches('_').contains('_');
    let humps = bytes
        .windows(2)
        .filter(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
        .count();
    let lower_start = bytes.first().is_some_and(u8::is_ascii_lowercase);
    let camel = humps >= 2 || (humps == 1 && lower_start);
    word.len() > 3 && (inner_underscore || camel)
}

/// The prefixes of the function names of CUDA's runtime (`cudaMallocHost`),
/// driver (`cuCtxCreate`) and libraries (`cublasCreate`, `ncclCommInitRank`),
/// as [`is_api_name`] reads them.
pub const API_NAME_PREFIXES: &[&str] = &[
    "cuda", "cu", "cublas", "cudnn", "cufft", "curand", "cusolver", "cusparse", "nccl",
];

/// Whether a word names a call of CUDA's APIs: an identifier that starts
/// with one of [`API_NAME_PREFIXES`], then a capital and a lowercase letter
/// (`cudaMallocHost`, `cuCtxCreate`, `cublasCreate`; not the libraries' own
/// names, `cuDNN`, `cuBLAS`), and that is neither an error's name
/// (`cudaErrorAssert`, already a feature of its own) nor a generic one
/// (`cudaSuccess`, `cudaCheckError`). A user who tells a failure in prose
/// names the calls involved; a case names them in its title, cause and fix.
pub fn is_api_name(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    let shaped = API_NAME_PREFIXES.iter().any(|p| {
        word.strip_prefix(p).is_some_and(|rest| {
            let mut c = rest.chars();
            c.next().is_some_and(|c| c.is_ascii_uppercase())
                && c.next().is_some_and(|c| c.is_ascii_lowercase())
        })
    });
    shaped
        && is_identifier(word)
        && !is_error_name(&format!("id:{lower}"))
        && !GENERIC_IDENTIFIERS.contains(&lower.as_str())
}

/// The words that say a call is not made, within [`MISSING_CALL_WINDOW`]
/// words before its name: "without cudaFreeHost", "never freed with
/// cudaFreeHost", "forgets cuMemFree", "doesn't call cudaStreamDestroy".
pub const MISSING_CALL_WORDS: &[&str] = &[
    "without",
    "never",
    "not",
    "no",
    "t",
    "missing",
    "forgot",
    "forgets",
    "forgetting",
];

/// How many words before a call's name a [`MISSING_CALL_WORDS`] word says
/// it is not made.
pub const MISSING_CALL_WINDOW: usize = 3;

/// The marks that end a clause: a [`MISSING_CALL_WORDS`] word before one
/// says nothing of a call after it ("new without delete, cudaMallocHost").
pub const CLAUSE_MARKS: &str = ",;:.()!?";

/// Every mention of a CUDA call in a text ([`is_api_name`]), in order, as
/// the identifier feature it is (`id:cudamallochost`), and whether the
/// words before it in its clause say the call is not made
/// ([`MISSING_CALL_WORDS`], with no figure or path between). Read line by
/// line without frames, clause by clause, as step 2 reads words (a name in
/// a path or with a figure in it is none).
pub fn api_mentions(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for line in without_frames(text) {
        for clause in line.split(|c| CLAUSE_MARKS.contains(c)) {
            let tokens = line_tokens(clause);
            for (i, t) in tokens.iter().enumerate() {
                let Token::Word(w) = t else { continue };
                if !is_api_name(w) {
                    continue;
                }
                let missing = tokens[..i]
                    .iter()
                    .rev()
                    .take(MISSING_CALL_WINDOW)
                    .map_while(|t| match t {
                        Token::Word(w) => Some(w.to_ascii_lowercase()),
                        Token::Break => None,
                    })
                    .any(|w| MISSING_CALL_WORDS.contains(&w.as_str()));
                out.push((format!("id:{}", w.to_ascii_lowercase()), missing));
            }
        }
    }
    out
}

/// How a line of the user's code starts: an import, a definition, a
/// return, a preprocessor's directive.
pub const CODE_STARTS: &[&str] = &["import ", "def ", "return ", "#include", "#define"];

/// Whether a line is a statement of the user's code, not a message: an
/// import, a definition or a return ([`CODE_STARTS`]), an assignment (`x =
/// torch.ones(…)`, `int i = blockIdx.x;`: one or two words, then ` = `), or
/// a call alone on its line (`c10d.all_reduce(x)`, `cudaFree(p);`), commented
/// out or not (`#torch.cuda.set_device(device)`). A repro's code names the
/// calls it makes, whatever failed in it: a call to `all_reduce` is no
/// collective's timeout. A line that says it reports an error, or names
/// one (`CudaAPIError(2, '… CUDA_ERROR_OUT_OF_MEMORY')`), is a message.
pub fn is_code(line: &str) -> bool {
    let t = line.trim();
    if CODE_STARTS.iter().any(|s| t.starts_with(s)) {
        return true;
    }
    let t = t
        .strip_prefix("//")
        .or_else(|| t.strip_prefix('#'))
        .unwrap_or(t)
        .trim_start();
    let names_an_error = line_tokens(t).iter().any(
        |w| matches!(w, Token::Word(w) if is_error_name(&format!("id:{}", w.to_ascii_lowercase()))),
    );
    if says_error(t) || names_an_error {
        return false;
    }
    let imports = t.starts_with("from ") && t.contains(" import ");
    let assigned = t.split_once(" = ").is_some_and(|(target, _)| {
        !target.is_empty()
            && target.split_whitespace().count() <= 2
            && target
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.[]*&<>:, ".contains(c))
    });
    let called = t.split_once('(').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.:".contains(c))
            && !["Error", "Exception", "Warning"]
                .iter()
                .any(|e| name.ends_with(e))
            && (t.ends_with(')') || t.ends_with(");"))
    });
    CODE_STARTS.iter().any(|s| t.starts_with(s)) || imports || assigned || called
}

/// The text without the lines of the user's code ([`is_code`]): what a
/// pasted text's errors and phrases are read from.
pub fn without_code(text: &str) -> String {
    without_lines(text, is_code)
}

/// The text without the lines `drop` picks, the others joined as they were.
fn without_lines(text: &str, drop: fn(&str) -> bool) -> String {
    text.lines()
        .filter(|l| !drop(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether a line is a row of a table (`| … |`, `+---+`), as nvidia-smi
/// prints: data, whose words name processes and states, not what failed.
pub fn is_table_row(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('|') || t.starts_with("+-") || t.starts_with("+=")
}

/// The text without its tables' rows ([`is_table_row`]): what a text that
/// reports no error besides its notes is matched on (its figures are read
/// from the whole text).
pub fn without_rows(text: &str) -> String {
    without_lines(text, is_table_row)
}

/// The text without its warnings, information lines and settings
/// ([`is_note`]): what a text that reports an error besides them is
/// matched on. A log's `I0404 … caffe.cpp:459] CUDA driver version: 9000`
/// says what ran, not what failed.
pub fn without_notes(text: &str) -> String {
    without_lines(text, is_note)
}

/// Whether a line says it reports an error: an exception's name before a
/// colon (`RuntimeError:`, `torch.OutOfMemoryError:`), `error:` in any
/// case, a device-side assertion, a failed check of glog (`Check failed:`,
/// fatal, as Caffe, MXNet and TensorFlow print it), or a library's error
/// without a colon ([`LIBRARY_ERRORS`]).
pub fn says_error(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    line.contains("Error:")
        || line.contains("Exception:")
        || lower.contains("error:")
        || line.contains("Assertion `")
        || line.contains("Check failed:")
        || LIBRARY_ERRORS.iter().any(|e| lower.contains(e))
}

/// How a program's own check prints a CUDA library's error without a colon
/// after it: `Cuda error invalid configuration argument`, TensorRT's `Cudnn
/// Error in executeConv: 8 (CUDNN_STATUS_EXECUTION_FAILED)`.
pub const LIBRARY_ERRORS: &[&str] = &[
    "cuda error ",
    "cudnn error ",
    "cublas error ",
    "nccl error ",
];

/// Whether a line is a warning, information or a table's row, not the
/// report of an error. A row of a table (`| … |`, `+---+`), as nvidia-smi
/// prints, is one whatever its cells say: they are states and names
/// (`ERR!`, a process nvidia-smi cannot name shown as `Unknown Error`), not
/// a message. Any other line is one unless it speaks of an error (the words
/// error, fail or fault in it): a PyTorch warning that CUDA could not
/// initialise reports an error, one that a function is deprecated does not.
/// Such a line is
/// - a warning or information by its level: Python's warnings
///   (`UserWarning:`, `Warning:`), a `WARNING` or `INFO` level, the level
///   letter of glog and PyTorch's C++ (`W1119 …`, `[W socket.cpp:…]`,
///   `[I1010 …]`) or of TensorFlow after its time (`…:03.826149: I …`);
/// - a setting: a name, `: `, and only figures (`CUDA Runtime version:
///   10.0.0`, `GPU memory: 3.99 GiB`).
pub fn is_note(line: &str) -> bool {
    let t = line.trim();
    let lower = t.to_ascii_lowercase();
    if is_table_row(t) {
        return true;
    }
    if ["error", "fail", "fault"].iter().any(|w| lower.contains(w)) {
        return false;
    }
    let level_word = lower.contains("warning:")
        || t.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w == "WARNING" || w == "INFO");
    let unbracketed = t.strip_prefix('[').unwrap_or(t);
    let mut chars = unbracketed.chars();
    let level_letter = match (chars.next(), chars.next()) {
        (Some('W' | 'I'), Some(next)) => {
            next.is_ascii_digit() || (next == ' ' && t.starts_with('['))
        }
        _ => false,
    };
    let after_time = t.starts_with(|c: char| c.is_ascii_digit())
        && t.split_once(": ")
            .is_some_and(|(_, rest)| rest.starts_with("I ") || rest.starts_with("W "));
    let setting = t.split_once(": ").is_some_and(|(name, value)| {
        name.chars().any(|c| c.is_ascii_alphabetic())
            && !value.trim().is_empty()
            && !line_tokens(value)
                .iter()
                .any(|w| matches!(w, Token::Word(_)))
    });
    level_word || level_letter || after_time || setting
}

/// A generic word, or a generic identifier read as a word (`runtimeerror`).
fn generic(word: &str) -> bool {
    GENERIC_WORDS.contains(&word) || GENERIC_IDENTIFIERS.contains(&word)
}

/// Whether a phrase of these lowercased words says what failed: it holds a
/// word that is neither generic nor a function word, and two such where it
/// holds a function word ([`FUNCTION_WORDS`]).
pub fn specific<S: AsRef<str>>(words: &[S]) -> bool {
    let function = |w: &str| FUNCTION_WORDS.contains(&w);
    let telling: Vec<&str> = words
        .iter()
        .map(AsRef::as_ref)
        .filter(|w| !generic(w) && !function(w))
        .collect();
    let glued = words.iter().any(|w| function(w.as_ref()));
    telling.len() >= if glued { 2 } else { 1 } && !generic_phrase(&telling)
}

/// Whether these words, in order, are one of [`GENERIC_PHRASES`].
fn generic_phrase(words: &[&str]) -> bool {
    GENERIC_PHRASES.contains(&words.join(" ").as_str())
}

/// Whether two words that stand alone between breaks, a whole message,
/// say what failed: one of them is neither generic nor a function word. A
/// function word does not make them a piece of any sentence, as it does
/// inside a longer run ([`specific`]).
pub fn whole_message<S: AsRef<str>>(words: &[S]) -> bool {
    let words: Vec<&str> = words.iter().map(AsRef::as_ref).collect();
    words
        .iter()
        .any(|w| !generic(w) && !FUNCTION_WORDS.contains(w))
        && !generic_phrase(&words)
}

/// The features of a case's text (steps 4 to 6), as a sorted set.
pub fn features(text: &str) -> BTreeSet<String> {
    let mut f = features_of(&tokens(text), Reading::Case);
    f.extend(figures(text));
    f.extend(xids(text));
    f
}

/// The features of one line of a pasted text.
pub fn line_features(line: &str) -> BTreeSet<String> {
    let mut f = features_of(
        &out_of_memory_in_words(remove_boilerplate(line_tokens(line))),
        Reading::Pasted,
    );
    f.extend(figures(line));
    f.extend(xids(line));
    f
}

/// The numbers of the driver's Xid reports a text holds (step 6), each
/// once, as `xid:<n>`: `NVRM: Xid (PCI:0000:07:00): 48, …` gives `xid:48`,
/// and so does "Xid 48" in prose. The number names what the driver saw (48
/// a double-bit ECC error, 79 a GPU fallen off the bus); the frame around
/// it is every report's, and is removed as boilerplate.
pub fn xids(text: &str) -> Vec<String> {
    let lower = text.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let skip_blanks = |mut i: usize| {
        while matches!(bytes.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        i
    };
    let mut out: Vec<String> = Vec::new();
    let mut from = 0;
    while let Some(at) = lower[from..].find("xid") {
        let start = from + at;
        from = start + 3;
        if (start > 0 && word(bytes[start - 1])) || bytes.get(from).is_some_and(|b| word(*b)) {
            continue;
        }
        let mut i = skip_blanks(from);
        // The device, as `(PCI:0000:07:00)`.
        if bytes.get(i) == Some(&b'(') {
            match lower[i..].find(')') {
                Some(close) => i += close + 1,
                None => continue,
            }
        }
        i = skip_blanks(i);
        if bytes.get(i) == Some(&b':') {
            i += 1;
        }
        i = skip_blanks(i);
        let digits: String = lower[i..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let feature = format!("xid:{digits}");
        if !digits.is_empty() && !out.contains(&feature) {
            out.push(feature);
        }
    }
    out
}

/// The sizes an out-of-memory message gives, in bytes. PyTorch 2.x writes
/// "Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of
/// which 30.1 MiB is free. Including non-PyTorch memory, this process has
/// 79.1 GiB memory in use. Of the allocated memory 44.0 GiB is allocated by
/// PyTorch, and 1.05 GiB is reserved by PyTorch but unallocated"; 1.4 to
/// 1.13 wrote "Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity;
/// 5.59 GiB already allocated; 19.75 MiB free; 5.85 GiB reserved in total by
/// PyTorch)"; 0.4 to 1.3 ended "…; 19.75 MiB free; 260.0 MiB cached)", where
/// "cached" is what PyTorch holds beyond what is allocated.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OomSizes {
    pub request: f64,
    pub capacity: Option<f64>,
    pub free: Option<f64>,
    /// Allocated to tensors by PyTorch.
    pub allocated: Option<f64>,
    /// Reserved by PyTorch's caching allocator and not allocated.
    pub unallocated: Option<f64>,
    /// All this process holds on the GPU, PyTorch's or not (2.x only).
    pub in_use: Option<f64>,
    /// What this process may hold, where the program capped it
    /// (`torch.cuda.set_per_process_memory_fraction`: "16.00 GiB allowed").
    pub allowed: Option<f64>,
}

impl OomSizes {
    /// The sizes of the first out-of-memory message in `text`, if it has
    /// one with a request.
    pub fn read(text: &str) -> Option<OomSizes> {
        let request = size_after(text, "Tried to allocate ")?;
        let allocated = size_before(text, " is allocated by PyTorch")
            .or_else(|| size_before(text, " already allocated"));
        let unallocated = size_before(text, " is reserved by PyTorch but unallocated")
            .or_else(|| Some(size_before(text, " reserved in total by PyTorch")? - allocated?))
            .or_else(|| size_before(text, " cached)"))
            .or_else(|| size_before(text, " cache)"));
        Some(OomSizes {
            request,
            capacity: size_after(text, "total capacity of ")
                .or_else(|| size_before(text, " total capacity")),
            free: size_before(text, " is free").or_else(|| size_before(text, " free;")),
            allocated,
            unallocated,
            in_use: size_after(text, "this process has "),
            allowed: size_before(text, " allowed"),
        })
    }

    /// What this process holds: as the message says (2.x), or what PyTorch
    /// holds, allocated or not (1.x, which leaves out the context's own).
    fn this_process(&self) -> Option<f64> {
        self.in_use
            .or_else(|| Some(self.allocated? + self.unallocated.unwrap_or(0.0)))
    }
}

/// What the figures of an out-of-memory message say (step 5), each a
/// feature a case's texts can share:
/// - `fig:request-exceeds-capacity`: one request larger than the whole GPU.
/// - `fig:unallocated-reserve-holds-request`: memory PyTorch reserved but
///   left unallocated would hold the request by itself (and the allocator
///   still could not serve it), or it and the free memory together would,
///   and the unallocated part is half the request or a twentieth of the GPU
///   or more. The memory is there, in pieces.
/// - `fig:memory-held-outside-this-process`: a quarter of the GPU or more
///   is neither free nor this process's: another process holds it. Read
///   before the pieces: it says more.
/// - `fig:this-process-holds-the-gpu`: what PyTorch holds in this process is
///   three quarters of the GPU or more (of the share the program allowed
///   itself, where the message names one), and none of the above: the
///   program's own tensors fill it.
pub fn figures(text: &str) -> Vec<String> {
    let mut out: Vec<String> = OomSizes::read(text)
        .and_then(|m| figure(&m))
        .map(str::to_owned)
        .into_iter()
        .collect();
    // A line that says the first GPU holds memory for the others names the
    // later GPUs as those others, not as where the work ran.
    if text
        .lines()
        .any(|l| names_a_later_device(l) && !first_gpu_holds_memory_for_others(l))
    {
        out.push(ANOTHER_DEVICE.to_owned());
    }
    if text.lines().any(is_device_assertion) {
        out.push(DEVICE_ASSERTION.to_owned());
    }
    if names_a_stream_capture_state(text) {
        out.push(STREAM_CAPTURE.to_owned());
    }
    if text.lines().any(first_gpu_holds_memory_for_others)
        || process_table_shows_the_first_gpu_for_others(text)
    {
        out.push(FIRST_GPU_FOR_OTHERS.to_owned());
    }
    out
}

/// Whether nvidia-smi's process table lists one process on the first GPU and
/// again on another: the rows `|    0   N/A  N/A   2579941  C  …/python3.9
/// 414MiB |` and `|    1   N/A  N/A   2579941  C  …  13868MiB |`. A process
/// that works on GPU 1 and holds memory on GPU 0 made a context there, which
/// is what the rows say without a word. A row is the GPU's index first, the
/// process's id before its type (`C`, `G`, `C+G`, `M`, `M+C`) and a size in
/// MiB last; the instance columns between (`N/A`, or numbers under MIG) are
/// skipped.
pub fn process_table_shows_the_first_gpu_for_others(text: &str) -> bool {
    let mut gpus_of: std::collections::BTreeMap<&str, BTreeSet<u32>> = Default::default();
    for line in text.lines() {
        let cells: Vec<&str> = line.trim().trim_matches('|').split_whitespace().collect();
        let Some(gpu) = cells.first().and_then(|c| c.parse::<u32>().ok()) else {
            continue;
        };
        let Some(kind) = cells
            .iter()
            .position(|c| PROCESS_TYPES.contains(c))
            .filter(|&k| k >= 2)
        else {
            continue;
        };
        let pid = cells[kind - 1];
        if pid.bytes().all(|b| b.is_ascii_digit())
            && cells.last().is_some_and(|c| c.ends_with("MiB"))
        {
            gpus_of.entry(pid).or_default().insert(gpu);
        }
    }
    gpus_of
        .values()
        .any(|gpus| gpus.contains(&0) && gpus.iter().any(|&g| g > 0))
}

/// The process types of nvidia-smi's table: compute, graphics, both, and the
/// MPS forms.
const PROCESS_TYPES: &[&str] = &["C", "G", "C+G", "M", "M+C"];

/// Whether the text holds a compiler's refusal (`nvcc fatal   : Unsupported
/// gpu architecture 'compute_89'`, `ptxas fatal`): the program was never
/// built, so no case's run explains it, and the words around it (an
/// architecture, an install) are not read against the cases' descriptions.
pub fn reports_a_build_failure(text: &str) -> bool {
    text.lines().any(|l| {
        let lower = l.trim_start().to_ascii_lowercase();
        BUILD_FAILURES.iter().any(|b| lower.starts_with(b))
    })
}

/// How a compiler's refusal begins.
pub const BUILD_FAILURES: &[&str] = &["nvcc fatal", "ptxas fatal"];

/// What compute-sanitizer's memcheck writes where an access fell outside
/// every allocation: "Address 0x7f47f601277c is out of bounds", "Access at
/// 0x0 is out of bounds".
pub const OUT_OF_BOUNDS_REPORT: &str = "is out of bounds";

/// Whether the text holds memcheck's report of an out-of-bounds access: a
/// line of the report (`=========`) that gives that reason.
pub fn reports_an_out_of_bounds_access(text: &str) -> bool {
    text.lines().any(|l| {
        l.trim_start().starts_with("=========")
            && l.to_ascii_lowercase().contains(OUT_OF_BOUNDS_REPORT)
    })
}

/// The feature of a text that says the first GPU holds memory for the
/// processes of other GPUs.
pub const FIRST_GPU_FOR_OTHERS: &str = "fig:the-first-gpu-holds-memory-for-others";

/// How a text names the first GPU, its number or its place: "GPU0", "GPU
/// 0", "cuda:0", "rank 0", "the first GPU", "the main GPU".
pub const FIRST_DEVICE_WORDS: &[&str] = &[
    "gpu0",
    "gpu 0",
    "gpu:0",
    "gpu #0",
    "cuda:0",
    "device 0",
    "rank0",
    "rank 0",
    "rank-0",
    "first gpu",
    "primary gpu",
    "main gpu",
    "master gpu",
];

/// How a text names the other GPUs or their processes beside the first
/// (a later GPU by its number counts too: "GPU 1", "GPUs 1, 2", "cuda:1").
pub const OTHER_DEVICES_WORDS: &[&str] = &[
    "other gpus",
    "other gpu",
    "other devices",
    "other ranks",
    "other rank",
    "other processes",
    "others",
    "each rank",
    "every rank",
    "all ranks",
    "each process",
    "every process",
    "all processes",
    "each worker",
    "every worker",
    // The ranks after the first, by what they are not: "each non-0 rank".
    "non-0 rank",
    "non-0 ranks",
    "non-zero rank",
    "non-zero ranks",
];

/// How a text says memory was given back: "the memory of the GPU0 is
/// released, but the other GPUs are not".
pub const RELEASED_WORDS: &[&str] = &["released", "freed", "cleared", "deallocated", "emptied"];

/// The words that deny what follows them in a clause ("are not released",
/// "wasn't freed": the apostrophe leaves "t").
pub const NEGATIONS: &[&str] = &["not", "never", "t", "cannot"];

/// The words of a line that speak of memory.
pub const MEMORY_AMOUNT_WORDS: &[&str] = &[
    "memory", "mem", "space", "ram", "vram", "mib", "gib", "mb", "gb",
];

/// Whether a line says that the first GPU holds memory beside the other
/// GPUs: it names the first GPU, the other GPUs (or their processes, or a
/// later GPU by number) and memory. Device numbers are figures, dropped
/// before phrases are read, so "the processes of GPUs 1, 2 and 3 use memory
/// on GPU0" and "the first GPU has memory used by processes run on other
/// GPUs" share no phrase; they say one thing, which is read here. The frame
/// of PyTorch's out-of-memory message ("GPU 0 has a total capacity",
/// "(GPU 0; …") names a GPU, not its place among others, and is no mention.
pub fn first_gpu_holds_memory_for_others(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let starts_a_word = |at: usize| at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
    let ends_a_word = |end: usize| bytes.get(end).is_none_or(|b| !b.is_ascii_alphanumeric());
    let mentions = |words: &[&str], frame: &[&str]| {
        words.iter().any(|w| {
            lower.match_indices(w).any(|(at, _)| {
                let end = at + w.len();
                // "other than device 0" names the first GPU as what the
                // device is not.
                let negated = NOT_THE_FIRST_WORDS
                    .iter()
                    .any(|n| lower[..at].trim_end().ends_with(n));
                starts_a_word(at)
                    && ends_a_word(end)
                    && !negated
                    && !frame.iter().any(|f| lower[end..].starts_with(f))
            })
        })
    };
    let first = mentions(FIRST_DEVICE_WORDS, &[" has a total capacity", ";"]);
    let later_by_number = ["gpu", "gpus", "cuda:", "gpu:", "rank", "device"]
        .iter()
        .any(|prefix| {
            lower.match_indices(prefix).any(|(at, _)| {
                let rest = lower[at + prefix.len()..].trim_start_matches(' ');
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                starts_a_word(at)
                    && digits.parse::<u32>().is_ok_and(|n| n >= 1)
                    && rest[digits.len()..]
                        .chars()
                        .next()
                        .is_none_or(|c| !c.is_ascii_alphanumeric())
            })
        });
    let others =
        later_by_number || mentions(OTHER_DEVICES_WORDS, &[]) || not_the_first_device(&lower);
    // "an illegal memory access" is an access, no amount of memory.
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let memory = words
        .iter()
        .enumerate()
        .any(|(i, w)| MEMORY_AMOUNT_WORDS.contains(w) && words.get(i + 1) != Some(&"access"));
    // The first GPU must be the one that holds: a clause that names it and
    // says its memory was released says the opposite.
    let released_first = lower
        .split([',', ';', '.', '!', '?'])
        .flat_map(|c| c.split(" but "))
        .any(|clause| {
            let words: Vec<&str> = clause
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect();
            let names_first = FIRST_DEVICE_WORDS.iter().any(|w| {
                clause.match_indices(w).any(|(at, _)| {
                    let b = clause.as_bytes();
                    (at == 0 || !b[at - 1].is_ascii_alphanumeric())
                        && b.get(at + w.len())
                            .is_none_or(|c| !c.is_ascii_alphanumeric())
                })
            });
            names_first
                && words.iter().enumerate().any(|(i, w)| {
                    RELEASED_WORDS.contains(w) && !words[..i].iter().any(|x| NEGATIONS.contains(x))
                })
        });
    first && others && memory && !released_first
}

/// How PyTorch's other backends begin their out-of-memory errors: Apple's
/// Metal ("MPS backend out of memory (MPS allocated: …). Tried to allocate
/// 6.25 MB on private pool") and Intel's ("XPU out of memory"). Their words
/// are CUDA's ("out of memory", "Tried to allocate"), their memory is not.
pub const OTHER_BACKENDS_OUT_OF_MEMORY: &[&str] =
    &["mps backend out of memory", "xpu out of memory"];

/// Whether the text's out-of-memory error is another backend's and nothing
/// in it names CUDA ([`OTHER_BACKENDS_OUT_OF_MEMORY`]).
pub fn another_backend_s_out_of_memory(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    OTHER_BACKENDS_OUT_OF_MEMORY
        .iter()
        .any(|b| lower.contains(b))
        && !lower.contains("cuda")
        && !lower.contains("cublas")
        && !lower.contains("cudnn")
}

/// The feature of a text that names a state or an error of stream capture.
pub const STREAM_CAPTURE: &str = "fig:a-stream-capture-state";

/// How CUDA names stream capture's states and errors, in the runtime and the
/// driver: `cudaErrorStreamCaptureInvalidated`, `cudaStreamCaptureStatus
/// Invalidated`, `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`. Each is one word to
/// the matcher, and one capture failure shows under several of them (the
/// error a call returns, the status PyTorch asserts on), so the family is
/// read as one.
const STREAM_CAPTURE_NAMES: &[&str] = &[
    "cudaerrorstreamcapture",
    "cudastreamcapturestatus",
    "cuda_error_stream_capture_",
    "cu_stream_capture_status_",
];

/// Whether the text names a state or an error of stream capture
/// ([`STREAM_CAPTURE_NAMES`]).
pub fn names_a_stream_capture_state(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    STREAM_CAPTURE_NAMES.iter().any(|n| lower.contains(n))
}

/// The feature of a text that holds a kernel's failed assertion.
pub const DEVICE_ASSERTION: &str = "fig:a-kernel-s-assertion-failed";

/// Whether a line is what a kernel's failed `assert` prints, whatever it
/// asserted: `file.cu:92: kernel: block: [0,0,0], thread: [31,0,0]
/// Assertion `…` failed.` The assertion's own words are the program's.
pub fn is_device_assertion(line: &str) -> bool {
    line.contains("block: [")
        && line.contains("thread: [")
        && line.contains("Assertion `")
        && line.contains("failed")
}

/// How a text says the device is not the first without a number:
/// "cuda:device!=0", "devices other than device:0", "any device except CPU
/// or 0".
pub const LATER_DEVICE_WORDS: &[&str] = &[
    "device!=0",
    "device != 0",
    "other than device:0",
    "other than device 0",
    "other than cuda:0",
    "other than gpu 0",
    "other than gpu:0",
    "except cpu or 0",
];

/// The feature of a text that names a GPU other than the first.
pub const ANOTHER_DEVICE: &str = "fig:a-device-other-than-the-first";

/// The words that name a device before its number: "a GPU != 0", "the
/// index not being 0", "other than device 0".
pub const DEVICE_NOUNS: &[&str] = &[
    "gpu", "gpus", "device", "devices", "cuda", "index", "id", "ordinal",
];

/// How a text says a device's number is not the first's, before the 0:
/// "GPU != 0", "the index not being 0", "any GPU other than 0".
pub const NOT_THE_FIRST_WORDS: &[&str] =
    &["!=", "not", "not being", "other than", "except", "besides"];

/// Whether the text names a GPU other than the first: the way PyTorch and
/// TensorFlow write a device (`cuda:1`, `/device:GPU:2`), a GPU by a later
/// number in words ("GPU 1 or 2", "GPU1"), or a device whose number is not
/// 0 ("a GPU != 0", "the index not being 0"). Work on a later GPU is what a
/// kernel launched on the current device (the first, by default) gets
/// wrong; the number itself is removed like every figure. PyTorch's
/// out-of-memory message names its GPU in its frame ("GPU 1 has a total
/// capacity", "(GPU 1; …"): no mention of a place among others.
fn names_a_later_device(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let numbered = |prefixes: &[&str], spaced: bool| {
        prefixes.iter().any(|prefix| {
            lower.match_indices(prefix).any(|(at, _)| {
                let starts_a_word = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
                let rest = &lower[at + prefix.len()..];
                let rest = if spaced {
                    rest.trim_start_matches(' ')
                } else {
                    rest
                };
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                let after = &rest[digits.len()..];
                let ends_a_word = after
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_ascii_alphanumeric());
                // A row of a list of the machine's GPUs, at the start of
                // its line ("GPU 1: GeForce GTX 1070 Ti" in PyTorch's
                // collect_env, `nvidia-smi -L`): every GPU, none in particular.
                let listed = after.starts_with(':')
                    && lower[..at]
                        .rsplit('\n')
                        .next()
                        .is_some_and(|line| line.trim().is_empty());
                let frame = [" has a total capacity", ";"]
                    .iter()
                    .any(|f| after.starts_with(f))
                    || listed;
                starts_a_word
                    && digits.parse::<u32>().is_ok_and(|n| n >= 1)
                    && (!spaced || (ends_a_word && !frame))
            })
        })
    };
    LATER_DEVICE_WORDS.iter().any(|w| lower.contains(w))
        || numbered(&["cuda:", "gpu:"], false)
        // "GPU1" glued is how tools label a GPU's row or column
        // (`nvidia-smi topo -m`): every GPU, none in particular.
        || numbered(&["gpu ", "gpus "], true)
        || not_the_first_device(&lower)
}

/// The words of a lowercased text as [`not_the_first_device`] reads them:
/// runs of letters, digits and `_`, and `!=`.
fn device_words(lower: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut i = 0;
    while i < lower.len() {
        let c = lower.as_bytes()[i];
        if c.is_ascii_alphanumeric() || c == b'_' {
            start.get_or_insert(i);
            i += 1;
            continue;
        }
        if let Some(s) = start.take() {
            out.push(&lower[s..i]);
        }
        if lower.as_bytes()[i..].starts_with(b"!=") {
            out.push("!=");
            i += 2;
        } else {
            i += 1;
        }
    }
    if let Some(s) = start {
        out.push(&lower[s..]);
    }
    out
}

/// Whether a lowercased text says a device's number is not 0: a 0 after
/// one of [`NOT_THE_FIRST_WORDS`] (and a device's noun between them, or
/// one at most two words before them).
fn not_the_first_device(lower: &str) -> bool {
    let words = device_words(lower);
    let noun = |w: &&str| DEVICE_NOUNS.contains(w);
    (0..words.len()).filter(|&j| words[j] == "0").any(|j| {
        let named = j > 0 && noun(&words[j - 1]);
        let end = if named { j - 1 } else { j };
        NOT_THE_FIRST_WORDS.iter().any(|not| {
            let not: Vec<&str> = not.split(' ').collect();
            end >= not.len() && words[end - not.len()..end] == not[..] && {
                let start = end - not.len();
                named || words[start.saturating_sub(2)..start].iter().any(noun)
            }
        })
    })
}

/// The one thing an out-of-memory message's sizes say, in the order of
/// [`figures`]: the first that holds.
fn figure(m: &OomSizes) -> Option<&'static str> {
    let capacity = m.capacity;
    if capacity.is_some_and(|c| m.request > c) {
        return Some("fig:request-exceeds-capacity");
    }
    // Another process holding a quarter of the GPU says more than a
    // fragmented reserve of this one: it is read first.
    let mine = m.this_process();
    if let (Some(c), Some(free), Some(mine)) = (capacity, m.free, mine)
        && c - free - mine >= c / 4.0
    {
        return Some("fig:memory-held-outside-this-process");
    }
    // The reserve in pieces: it holds the request, or with the free memory
    // it does and is itself no crumb (half the request, or a twentieth of
    // the GPU).
    let pieces = m.unallocated.is_some_and(|u| {
        u >= m.request
            || (u + m.free.unwrap_or(0.0) >= m.request
                && (u >= m.request / 2.0 || capacity.is_none_or(|c| u >= c / 20.0)))
    });
    if pieces {
        return Some("fig:unallocated-reserve-holds-request");
    }
    // What the process may hold: the GPU, or the share the program allowed.
    let room = match (capacity, m.allowed) {
        (Some(c), Some(a)) => Some(c.min(a)),
        (c, _) => c,
    };
    let holds = m.allocated.unwrap_or(0.0) + m.unallocated.unwrap_or(0.0);
    (mine.is_some() && room.is_some_and(|r| holds >= 0.75 * r))
        .then_some("fig:this-process-holds-the-gpu")
}

/// What each figure feature says, as an answer shows it among what
/// matched.
pub const FIGURE_WORDS: &[(&str, &str)] = &[
    (
        "fig:request-exceeds-capacity",
        "(the figures: one request larger than the whole GPU)",
    ),
    (
        "fig:memory-held-outside-this-process",
        "(the figures: a quarter of the GPU or more held outside this process)",
    ),
    (
        "fig:unallocated-reserve-holds-request",
        "(the figures: memory reserved by PyTorch but unallocated, with the free memory, would hold the request)",
    ),
    (
        "fig:this-process-holds-the-gpu",
        "(the figures: this process's PyTorch holds three quarters of the GPU or more)",
    ),
    (
        ANOTHER_DEVICE,
        "(a GPU other than the first: cuda:1 or later)",
    ),
    (
        DEVICE_ASSERTION,
        "(a kernel's assertion failed: block, thread, Assertion … failed)",
    ),
    (
        FIRST_GPU_FOR_OTHERS,
        "(the first GPU holds memory beside the other GPUs or their processes)",
    ),
    (
        STREAM_CAPTURE,
        "(a state or an error of stream capture: cudaStreamCaptureStatus…, cudaErrorStreamCapture…)",
    ),
];

pub const UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("bytes", 1.0),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
    ("TiB", 1099511627776.0),
    ("KB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("TB", 1e12),
];

fn unit(word: &str) -> Option<f64> {
    UNITS.iter().find(|(u, _)| *u == word).map(|(_, f)| *f)
}

/// "<number> <unit>" right after the first `marker`, in bytes.
fn size_after(text: &str, marker: &str) -> Option<f64> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let number: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let rest = rest[number.len()..].trim_start();
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    Some(number.parse::<f64>().ok()? * unit(&word)?)
}

/// "<number> <unit>" right before the first `marker`, in bytes.
fn size_before(text: &str, marker: &str) -> Option<f64> {
    let head = text[..text.find(marker)?].trim_end();
    let word_start = head
        .rfind(|c: char| !c.is_ascii_alphabetic())
        .map_or(0, |i| i + 1);
    let factor = unit(&head[word_start..])?;
    let head = head[..word_start].trim_end();
    let number_start = head
        .rfind(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or(0, |i| i + 1);
    Some(head[number_start..].parse::<f64>().ok()? * factor)
}

/// A feature of a text and the tokens (their indices) it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phrase {
    pub feature: String,
    pub tokens: Vec<usize>,
}

/// How a text is read. A case's text gives a two-word phrase only where
/// two words stand alone between breaks: a whole two-word message
/// ("misaligned address", "initialization error"). A pasted text gives
/// every two consecutive words as well, so that such a message is found
/// where another program wrapped it in a longer sentence ("CUDA failed
/// with error initialization error"); a pair that no case holds weighs
/// nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    Case,
    Pasted,
}

/// Every feature of `tokens` (step 4) with the tokens it stands for, in
/// order: what [`features_of`] collects and what the answer shows as
/// matched.
pub fn phrases(tokens: &[Token], reading: Reading) -> Vec<Phrase> {
    let mut out = Vec::new();
    let mut run: Vec<usize> = Vec::new();
    let lower = |i: usize| match &tokens[i] {
        Token::Word(w) => w.to_ascii_lowercase(),
        Token::Break => String::new(),
    };
    let phrase = |run: &[usize]| Phrase {
        feature: format!(
            "w:{}",
            run.iter().map(|&j| lower(j)).collect::<Vec<_>>().join(" ")
        ),
        tokens: run.to_vec(),
    };
    for i in 0..=tokens.len() {
        let word = match tokens.get(i) {
            Some(Token::Word(w)) => Some(w),
            _ => None,
        };
        // An error's name (`CUDA_ERROR_INVALID_VALUE`) is a feature of its
        // own, and the words after it ("invalid argument") a phrase of
        // their own, as where a framework wrote "CUDA error:" instead.
        let error_name = word.is_some_and(|w| {
            is_identifier(w) && is_error_name(&format!("id:{}", w.to_ascii_lowercase()))
        });
        // A framework's generic exception name, or a library's name, says
        // how or where the error was raised, not what it is: it breaks a
        // phrase as a figure does; so does an error's name.
        let generic_name =
            word.is_some_and(|w| GENERIC_IDENTIFIERS.contains(&w.to_ascii_lowercase().as_str()));
        if error_name {
            out.push(Phrase {
                feature: format!("id:{}", lower(i)),
                tokens: vec![i],
            });
        }
        let Some(w) = word.filter(|_| !error_name && !generic_name) else {
            // Two words alone between breaks ("misaligned address" once
            // "CUDA error:" is gone, "is misaligned" after an address) are
            // a whole message, and make a phrase where one says what failed.
            if run.len() == 2 && whole_message(&run.iter().map(|&j| lower(j)).collect::<Vec<_>>()) {
                out.push(phrase(&run));
            }
            run.clear();
            continue;
        };
        if is_identifier(w) {
            out.push(Phrase {
                feature: format!("id:{}", lower(i)),
                tokens: vec![i],
            });
        }
        run.push(i);
        if reading == Reading::Pasted && run.len() >= 2 {
            let pair = &run[run.len() - 2..];
            if specific(&pair.iter().map(|&j| lower(j)).collect::<Vec<_>>()) {
                out.push(phrase(pair));
            }
        }
        if run.len() >= 3 {
            let tri = &run[run.len() - 3..];
            if specific(&tri.iter().map(|&j| lower(j)).collect::<Vec<_>>()) {
                out.push(phrase(tri));
            }
        }
    }
    out
}

/// Whether a lowercased word says what failed: neither generic nor a
/// function word.
pub fn content_word(word: &str) -> bool {
    !generic(word) && !FUNCTION_WORDS.contains(&word)
}

/// The pairs of consecutive words in a phrase's words (or a text's) that
/// both say what failed ([`content_word`]), as `w:<a> <b>`: "memory leak"
/// in "a memory leak caused by". A phrase's pair is what several cases'
/// texts say in their own sentences around it.
pub fn content_pairs<S: AsRef<str>>(words: &[S]) -> Vec<String> {
    words
        .windows(2)
        .filter(|p| {
            content_word(p[0].as_ref())
                && content_word(p[1].as_ref())
                && !generic_phrase(&[p[0].as_ref(), p[1].as_ref()])
        })
        .map(|p| format!("w:{} {}", p[0].as_ref(), p[1].as_ref()))
        .collect()
}

/// Every pair of consecutive words of `tokens`, no break between them,
/// that both say what failed ([`content_pairs`]).
pub fn content_pairs_of(tokens: &[Token]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut run: Vec<String> = Vec::new();
    for t in tokens.iter().chain([&Token::Break]) {
        match t {
            Token::Word(w) => run.push(w.to_ascii_lowercase()),
            Token::Break => {
                out.extend(content_pairs(&run));
                run.clear();
            }
        }
    }
    out
}

pub fn features_of(tokens: &[Token], reading: Reading) -> BTreeSet<String> {
    phrases(tokens, reading)
        .into_iter()
        .map(|p| p.feature)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_bindings_spellings_of_a_driver_error_are_the_driver_s() {
        let name = |w: &str| driver_error_name(w);
        assert_eq!(
            name("ErrorInvalidContext").as_deref(),
            Some("CUDA_ERROR_INVALID_CONTEXT")
        );
        assert_eq!(
            name("ERROR_INVALID_CONTEXT").as_deref(),
            Some("CUDA_ERROR_INVALID_CONTEXT")
        );
        assert_eq!(
            name("ErrorOutOfMemory").as_deref(),
            Some("CUDA_ERROR_OUT_OF_MEMORY")
        );
        // A word, one hump, or no error's name at all: as written.
        for word in [
            "Errors",
            "ErrorCode",
            "Error",
            "ERROR_",
            "ERROR__X",
            "cudaErrorAssert",
        ] {
            assert_eq!(name(word), None, "{word}");
        }
        assert!(
            line_features("CUDA error: ErrorInvalidContext")
                .contains("id:cuda_error_invalid_context")
        );
    }

    #[test]
    fn the_user_s_code_is_told_from_a_message() {
        for code in [
            "c10d.all_reduce(x)",
            "    x = torch.ones((10,), device=device)",
            "#torch.cuda.set_device(device)",
            "  int gidx0 = blockIdx.x; /* 22369622 */",
            "cudaFree(ptr);",
            "import torch",
            "from torch import nn",
        ] {
            assert!(is_code(code), "{code}");
        }
        for message in [
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            "CudaAPIError(2, 'Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY')",
            "torch.OutOfMemoryError(CUDA out of memory)",
            "    cuModuleLoadData (libcuda.so.590.48.01)",
            "Each non-0 rank is occupying ~ 1GB memory on GPU 0.",
            "# Bug: the job hangs (rank 3)",
        ] {
            assert!(!is_code(message), "{message}");
        }
        assert_eq!(
            without_code("import torch\nc10d.all_reduce(x)\nhangs here"),
            "hangs here"
        );
    }

    #[test]
    fn a_cuda_call_s_name_keeps_its_digits_and_figures_are_still_dropped() {
        let words = |line: &str| -> Vec<String> {
            line_tokens(line)
                .into_iter()
                .filter_map(|t| match t {
                    Token::Word(w) => Some(w),
                    Token::Break => None,
                })
                .collect()
        };
        assert_eq!(
            words("cudaMemcpy2D and cuDevicePrimaryCtxReset_v2 fail"),
            ["cudaMemcpy2D", "and", "cuDevicePrimaryCtxReset_v2", "fail"]
        );
        // Sizes, addresses, devices and user's names with digits stay figures.
        assert_eq!(
            words("2.00 GiB at 0x7f3a on sm_90 V100 cuda12 layer_1 cuDNN8"),
            ["at", "on"]
        );
        let calls: Vec<String> = api_mentions("cudaMemcpy2D fails, cuMemcpyDtoHAsync_v2 hangs")
            .into_iter()
            .map(|(f, _)| f)
            .collect();
        assert_eq!(calls, ["id:cudamemcpy2d", "id:cumemcpydtohasync_v2"]);
    }

    #[test]
    fn one_process_on_the_first_gpu_and_another_is_read_from_nvidia_smi_s_rows() {
        let table = "|    0   N/A  N/A   2579940      C   .../bin/python3.9    13724MiB |\n\
                     |    0   N/A  N/A   2579941      C   .../bin/python3.9      414MiB |\n\
                     |    1   N/A  N/A   2579941      C   .../bin/python3.9    13868MiB |\n";
        assert!(process_table_shows_the_first_gpu_for_others(table));
        assert!(figures(table).contains(&FIRST_GPU_FOR_OTHERS.to_owned()));
        // Each process on its own GPU: nothing on the first for the others.
        let apart = "|    0   N/A  N/A   2579940      C   python    13724MiB |\n\
                     |    1   N/A  N/A   2579941      C   python    13868MiB |\n";
        assert!(!process_table_shows_the_first_gpu_for_others(apart));
        // The older table, without the instance columns.
        let old = "|    0     4242      C   python     414MiB |\n|    2     4242      C   python   9000MiB |";
        assert!(process_table_shows_the_first_gpu_for_others(old));
    }

    #[test]
    fn another_backend_s_out_of_memory_is_not_cuda_s() {
        assert!(another_backend_s_out_of_memory(
            "RuntimeError: MPS backend out of memory (MPS allocated: 8.89 GB, other allocations: \
             172.98 MB, max allowed: 9.07 GB). Tried to allocate 6.25 MB on private pool."
        ));
        assert!(!another_backend_s_out_of_memory(
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
        ));
        // A log that tried MPS and then CUDA names CUDA: read as usual.
        assert!(!another_backend_s_out_of_memory(
            "MPS backend out of memory ... then on the GPU: CUDA out of memory"
        ));
    }

    #[test]
    fn stream_capture_s_states_and_errors_are_one_family() {
        for text in [
            "RuntimeError: status == cudaStreamCaptureStatusInvalidated INTERNAL ASSERT FAILED",
            "CUDA error: operation not permitted when stream is capturing (cudaErrorStreamCaptureUnsupported)",
            "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
        ] {
            assert!(figures(text).contains(&STREAM_CAPTURE.to_owned()), "{text}");
        }
        assert!(!names_a_stream_capture_state(
            "cudaStreamCreate returned cudaSuccess"
        ));
    }

    #[test]
    fn a_compiler_s_refusal_is_a_build_failure() {
        assert!(reports_a_build_failure(
            "nvcc fatal   : Unsupported gpu architecture 'compute_80'\nmake: *** [all] Error 2"
        ));
        assert!(!reports_a_build_failure(
            "RuntimeError: CUDA error: no kernel image is available for execution on the device"
        ));
    }

    #[test]
    fn figures_paths_and_frames_break_phrases() {
        let text = "Traceback (most recent call last):\n  File \"/home/u/train.py\", line 12, in <module>\n    loss = model(x)\n    ^^^^^^^^\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB";
        let f = features(text);
        assert!(f.contains("id:outofmemoryerror"));
        assert!(f.contains("w:out of memory"));
        assert!(f.contains("w:tried to allocate"));
        // The figure breaks the phrase: "allocate gib gpu" is no feature.
        assert!(!f.iter().any(|x| x.contains("allocate gib")));
        // The frame and its code line are gone.
        assert!(!f.iter().any(|x| x.contains("loss") || x.contains("model")));
    }

    #[test]
    fn compute_sanitizer_s_frames_are_no_error_and_its_report_is() {
        let text = "========= COMPUTE-SANITIZER\n========= Invalid __shared__ read of size 16 bytes\n=========     at matrixMul(const float *, const float *, float *, int, int, int)+0x7120 in /src/gemm.cu:94\n=========     by thread (0,4,0) in block (0,0,0)\n=========     Address 0x10a8 is misaligned\n=========     Saved host backtrace up to driver entry point at kernel launch time\n=========     Host Frame:sgemm(int, int, int, float*, float*, float*, float, float) [0xd05a]\n=========                in /home/u/bin/benchmark\n";
        let kept = without_frames(text);
        assert_eq!(kept.len(), 3, "{kept:?}");
        assert!(kept[2].ends_with("is misaligned"));
        // "is misaligned", alone between the address and the line's end, is
        // a whole message; inside a sentence it would be a piece of it.
        assert!(features(text).contains("w:is misaligned"));
        assert!(!specific(&["is", "misaligned"]));
        assert!(whole_message(&["is", "misaligned"]));
        assert!(!whole_message(&["to", "the"]));
        // Newer reports name the device's frames too.
        let stack = "========= Stack overflow\n=========     by thread (0,0,0) in block (0,0,0)\n=========         Device Frame: void kernel<int, int, int>(int *)+0x10\n";
        assert_eq!(without_frames(stack), vec!["========= Stack overflow"]);
    }

    #[test]
    fn a_module_path_before_an_exception_s_name_makes_no_words() {
        let f = features(
            "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1691, remote process exited or there was a network error",
        );
        assert!(!f.iter().any(|x| x.contains("distributed")), "{f:?}");
        assert!(f.contains("w:remote process exited"), "{f:?}");
        let f = features(
            "cupy.cuda.runtime.CUDARuntimeError: cudaErrorMemoryAllocation: out of memory",
        );
        assert!(f.contains("id:cudaerrormemoryallocation"), "{f:?}");
        assert!(!f.iter().any(|x| x.contains("cupy")), "{f:?}");
        // A dotted name that is no exception's keeps its words.
        assert!(features("torch.cuda.set_device(1) was not called").contains("id:set_device"));
        assert_eq!(
            without_module_path("torch.cuda.set_device(1)"),
            "torch.cuda.set_device(1)"
        );
    }

    #[test]
    fn boilerplate_and_generic_words_make_no_feature() {
        let text = "RuntimeError: CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.";
        let f = features(text);
        assert!(f.contains("w:invalid device ordinal"));
        assert!(!f.contains("w:cuda error invalid"));
        assert!(
            !f.iter()
                .any(|x| x.contains("asynchronously") || x.contains("assertions"))
        );
        assert!(!f.contains("id:runtimeerror"));
        // NCCL's error classes ("unhandled system error", "unhandled cuda
        // error") say which library failed, not why.
        assert!(
            !features("NCCL failure common.cu:874 'unhandled system error'")
                .iter()
                .any(|x| x.contains("system") || x.contains("unhandled"))
        );
        assert!(!features("RuntimeError: CUDA out of memory").contains("w:runtimeerror cuda out"));
        // Two words between breaks make a phrase, after an error's name too.
        assert!(
            features("RuntimeError: CUDA error: misaligned address")
                .contains("w:misaligned address")
        );
        let f = features("CUDA_ERROR_INVALID_VALUE: invalid argument");
        assert!(f.contains("w:invalid argument") && f.contains("id:cuda_error_invalid_value"));
        // A library's name says where, not what.
        assert!(
            !features("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED").contains("id:cudnn")
        );
        assert!(!f.contains("id:cuda_launch_blocking"));
        // A framework's generic exception name makes no phrase either.
        let f = features("torch.AcceleratorError: CUDA error: invalid device ordinal");
        assert!(!f.contains("w:torch acceleratorerror cuda"));
        assert!(!f.contains("w:acceleratorerror cuda error"));
        assert!(line_features("Traceback (most recent call last):").is_empty());
        // A logger's or a warning's frame before the reason names no cause.
        let f = features(
            "[reformat.cu::operator()::1606] Error Code 1: Cuda Runtime (invalid resource handle)",
        );
        assert!(f.contains("w:invalid resource handle"), "{f:?}");
        assert!(!f.iter().any(|x| x.contains("code")), "{f:?}");
        let f = features(
            "/usr/lib/python3.6/site-packages/torch/cuda/__init__.py:80: UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount()",
        );
        assert!(f.contains("id:cudagetdevicecount"), "{f:?}");
        assert!(!f.iter().any(|x| x.contains("initialization")), "{f:?}");
    }

    #[test]
    fn the_figures_of_an_out_of_memory_message_are_read_in_both_forms() {
        let new = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 79.19 GiB of which 30.1 MiB is free. Of the allocated memory 44.00 GiB is allocated by PyTorch, and 32.90 GiB is reserved by PyTorch but unallocated.";
        assert_eq!(figures(new), vec!["fig:unallocated-reserve-holds-request"]);
        let old = "RuntimeError: CUDA out of memory. Tried to allocate 305.18 GiB (GPU 0; 14.75 GiB total capacity; 1.25 GiB already allocated; 12.94 GiB free; 1.27 GiB reserved in total by PyTorch)";
        assert_eq!(figures(old), vec!["fig:request-exceeds-capacity"]);
        let own = "RuntimeError: CUDA out of memory. Tried to allocate 300.00 MiB (GPU 0; 7.79 GiB total capacity; 5.59 GiB already allocated; 19.75 MiB free; 5.85 GiB reserved in total by PyTorch)";
        // 0.26 GiB reserved but unallocated, with the free memory, would not
        // hold 300 MiB; PyTorch holds three quarters of the GPU.
        assert_eq!(figures(own), vec!["fig:this-process-holds-the-gpu"]);
        // The same figures and a 20 MiB request: the unallocated 0.26 GiB
        // would hold it, and the allocator could not serve it from them.
        assert_eq!(
            figures(&own.replace("300.00 MiB", "20.00 MiB")),
            vec!["fig:unallocated-reserve-holds-request"]
        );
        let cached = "RuntimeError: CUDA out of memory. Tried to allocate 7.31 GiB (GPU 0; 11.92 GiB total capacity; 307.86 MiB already allocated; 4.36 GiB free; 6.80 GiB cached)";
        // Free and cached memory would hold it together.
        assert_eq!(
            figures(cached),
            vec!["fig:unallocated-reserve-holds-request"]
        );
        // A reserve of 1.83 GiB is little of an 80 GB GPU but most of a
        // 1.96 GiB request, and with the free 1.08 GiB would hold it.
        let most_of_it = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of 79.18 GiB of which 1.08 GiB is free. Including non-PyTorch memory, this process has 78.09 GiB memory in use. Of the allocated memory 75.31 GiB is allocated by PyTorch, and 1.83 GiB is reserved by PyTorch but unallocated.";
        assert_eq!(
            figures(most_of_it),
            vec!["fig:unallocated-reserve-holds-request"]
        );
        // A crumb beside the free memory is no reserve in pieces.
        assert_eq!(
            figures(
                &most_of_it
                    .replace("and 1.83 GiB is reserved", "and 0.50 GiB is reserved")
                    .replace("1.08 GiB is free", "1.50 GiB is free")
            ),
            vec!["fig:this-process-holds-the-gpu"]
        );
        let elsewhere = "Tried to allocate 216.00 MiB (GPU 0; 7.92 GiB total capacity; 69.17 MiB already allocated; 24.56 MiB free; 86.00 MiB reserved in total by PyTorch)";
        assert_eq!(
            figures(elsewhere),
            vec!["fig:memory-held-outside-this-process"]
        );
        let other = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 40.00 GiB. GPU 0 has a total capacity of 79.18 GiB of which 30.00 GiB is free. Process 4242 has 40.00 GiB memory in use. Including non-PyTorch memory, this process has 9.00 GiB memory in use. Of the allocated memory 8.00 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.";
        assert_eq!(figures(other), vec!["fig:memory-held-outside-this-process"]);
        // A process capped at 16 GiB (set_per_process_memory_fraction) that
        // holds them: its own tensors fill what it may hold, though the GPU
        // has room; without the cap the same figures say nothing.
        let capped = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 79.18 GiB of which 59.95 GiB is free. Including non-PyTorch memory, this process has 16.43 GiB memory in use. 16.00 GiB allowed; Of the allocated memory 15.70 GiB is allocated by PyTorch, and 40.00 MiB is reserved by PyTorch but unallocated.";
        assert_eq!(figures(capped), vec!["fig:this-process-holds-the-gpu"]);
        assert!(figures(&capped.replace(" 16.00 GiB allowed;", "")).is_empty());
        // Nothing said of the GPU: nothing read.
        assert!(
            figures("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 62.02 GiB.")
                .is_empty()
        );
        assert!(figures("CUDA out of memory").is_empty());
    }

    #[test]
    fn a_later_gpu_is_read_from_pytorch_s_and_tensorflow_s_device_names() {
        assert_eq!(
            figures(
                "Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0!"
            ),
            vec![ANOTHER_DEVICE]
        );
        assert_eq!(
            figures("placed on /job:localhost/replica:0/task:0/device:GPU:2"),
            vec![ANOTHER_DEVICE]
        );
        assert!(figures("tensor(1., device='cuda:0')").is_empty());
        assert!(
            figures("RuntimeError: CUDA error: an illegal memory access was encountered")
                .is_empty()
        );
        // A word that ends in "cuda" is no device's name.
        assert!(figures("nvcuda:1").is_empty());
    }

    #[test]
    fn a_later_gpu_in_words_is_read_and_a_list_of_gpus_is_not() {
        for text in [
            "It works well on GPU 0, but CUDA error occurred when I run my model on GPU 1 or 2.",
            "CUDA error occurred when running on a GPU with the index not being 0",
            "on a multi GPU system, if a GPU != 0 is used",
            "the kernel fails on any GPU other than 0",
        ] {
            assert_eq!(figures(text), vec![ANOTHER_DEVICE], "{text}");
        }
        for text in [
            // `nvidia-smi topo -m` labels every GPU.
            "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity",
            // PyTorch's collect_env and `nvidia-smi -L` list every GPU.
            "GPU models and configuration:\nGPU 0: GeForce RTX 2070 SUPER\nGPU 1: GeForce GTX 1070 Ti",
            "GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-0000)",
            // PyTorch's out-of-memory frame names the GPU it ran on.
            "GPU 1 has a total capacity of 79.19 GiB",
            "Tried to allocate 20.00 MiB (GPU 1; 7.79 GiB total capacity)",
            "the device count is not 0",
            "it works on GPU 0",
        ] {
            assert!(
                !figures(text).contains(&ANOTHER_DEVICE.to_owned()),
                "{text}"
            );
        }
        // Where the first GPU holds memory for the others, the later GPUs
        // are those others, and "GPU != 0" is not the first GPU named.
        assert_eq!(
            figures("if a GPU != 0 is used, pytorch will still allocate some memory on the GPU 0"),
            vec![FIRST_GPU_FOR_OTHERS]
        );
        assert!(!first_gpu_holds_memory_for_others(
            "an illegal memory access when specified a gpu device other than device 0"
        ));
        // An illegal memory access is no amount of memory held.
        let line = "an illegal memory access was encountered when I set device=\"cuda:1\", and with device=\"cuda:0\" the bug disappears";
        assert!(!first_gpu_holds_memory_for_others(line));
        assert_eq!(figures(line), vec![ANOTHER_DEVICE]);
    }

    #[test]
    fn a_kernel_s_failed_assertion_and_a_later_gpu_in_words_are_read() {
        let line = "../aten/src/ATen/native/cuda/NLLLoss2d.cu:103: nll_loss2d_forward_kernel: block: [3,0,0], thread: [929,0,0] Assertion `t >= 0 && t < n_classes` failed.";
        assert_eq!(figures(line), vec![DEVICE_ASSERTION]);
        assert!(figures("assert(x) failed in host code").is_empty());
        assert_eq!(
            figures("illegal memory access error when using cuda:device!=0"),
            vec![ANOTHER_DEVICE]
        );
        assert!(says_error(
            "accelerator_barrier(): Cuda error invalid configuration argument"
        ));
        assert!(!says_error("CUDA version 12.4 detected"));
    }

    #[test]
    fn the_frame_of_an_out_of_memory_message_and_its_units_make_no_feature() {
        let f = features(
            "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 5.59 GiB already allocated; 19.75 MiB free; 5.85 GiB reserved in total by PyTorch)",
        );
        assert!(f.contains("w:tried to allocate"));
        assert!(
            !f.iter()
                .any(|x| x.contains("capacity") || x.contains("mib") || x.contains("gib")),
            "{f:?}"
        );
        let f = features(
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.18 GiB of which 30.00 MiB is free. Including non-PyTorch memory, this process has 79.1 GiB memory in use. Of the allocated memory 44.0 GiB is allocated by PyTorch, and 1.05 GiB is reserved by PyTorch but unallocated.",
        );
        assert!(
            !f.iter().any(|x| x.contains("capacity")
                || x.contains("process")
                || x.contains("unallocated")),
            "{f:?}"
        );
        // A unit is a word where no figure stands before it.
        assert!(line_tokens("size in MiB").contains(&Token::Word("MiB".into())));
    }

    #[test]
    fn a_pasted_text_gives_its_word_pairs_and_a_case_text_its_lone_pairs_only() {
        let sentence = tokens("RuntimeError: CUDA failed with error initialization error");
        let pasted = features_of(&sentence, Reading::Pasted);
        assert!(pasted.contains("w:initialization error"), "{pasted:?}");
        // A pair of generic words is no feature on either side.
        assert!(!pasted.contains("w:failed with"));
        let case = features_of(&sentence, Reading::Case);
        assert!(!case.contains("w:initialization error"), "{case:?}");
        // Two words alone between breaks are a phrase on both sides.
        let lone = tokens("CUDA error: initialization error");
        assert!(features_of(&lone, Reading::Case).contains("w:initialization error"));
        assert!(features_of(&lone, Reading::Pasted).contains("w:initialization error"));
    }

    #[test]
    fn the_first_gpu_holding_memory_for_the_others_is_read_in_any_words() {
        for line in [
            "The processes that were spun up on GPUs 1, 2, and 3 are using almost a GB each of space on GPU0.",
            "the first GPU is going to have some memory used by processes run on other GPUs",
            "running a process with GPU 1 will occupy 1000m of memory in GPU 1, and 200m of memory in GPU 0",
            "Memory used on GPU0 is much more than others",
            "rank 0 has more threads than other rank, each holding a fragment of GPU memory",
            // Not released on the first GPU: it holds.
            "the memory of GPU0 is not released after the other processes exit",
        ] {
            assert!(first_gpu_holds_memory_for_others(line), "{line}");
            assert!(figures(line).contains(&FIRST_GPU_FOR_OTHERS.to_owned()));
        }
        for line in [
            // PyTorch's out-of-memory frame names GPU 0 and other processes.
            "Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 79.18 GiB of which 70.55 GiB is free. Process 841 has 950.00 MiB memory in use. Including non-PyTorch memory, this process has 1.72 GiB memory in use. Process 842 has 1.72 GiB memory in use.",
            "Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; other processes hold memory)",
            // The first GPU and others, no memory.
            "GPU1 will wait for GPU0 in the allreduce",
            // Memory on the first GPU alone.
            "Taking up memory on the primary GPU loading from checkpoint",
            // A GPU numbered 10 is no first GPU.
            "GPU 10 and the other GPUs have memory left",
            // The first GPU gave its memory back; the others hold it.
            "when the program ends, the memory of the GPU0 is released, but the other GPUs are not released",
            "GPU 0 memory is freed at exit while GPU 1 and 2 keep theirs",
        ] {
            assert!(!first_gpu_holds_memory_for_others(line), "{line}");
        }
    }

    #[test]
    fn memcheck_s_out_of_bounds_reason_is_read_on_its_report_s_lines_only() {
        let report = "========= Invalid __global__ write of size 8 bytes\n=========     at compress(const unsigned int *)+0x4bd0\n=========     Access at 0x0 is out of bounds\n";
        assert!(reports_an_out_of_bounds_access(report));
        assert!(!reports_an_out_of_bounds_access(
            "========= Invalid __global__ read of size 16 bytes\n=========     Address 0x10a8 is misaligned"
        ));
        assert!(!reports_an_out_of_bounds_access(
            "Assertion `index out of bounds` failed: the index is out of bounds"
        ));
    }

    #[test]
    fn out_of_memory_in_other_words_is_read_as_out_of_memory() {
        for text in [
            "It results in subsequent OOMs.",
            "an OOM error",
            "GPU ram was out",
            "the training ran out of GPU memory",
            "the memory has run out",
            "out of VRAM",
        ] {
            assert!(
                features_of(&tokens(text), Reading::Pasted).contains("w:out of memory"),
                "{text}: {:?}",
                features_of(&tokens(text), Reading::Pasted)
            );
        }
        // A clause that goes on with "of" says something else.
        assert!(!features("the memory is out of sync").contains("w:out of memory"));
        assert!(!features("OOM_SCORE_ADJ is set").contains("w:out of memory"));
        assert!(line_features("subsequent OOMs").contains("w:out of memory"));
    }

    #[test]
    fn an_out_of_memory_the_text_denies_is_not_read() {
        for text in [
            "This is not OOM, VRAM sits at 68%",
            "it isn't an OOM",
            "no OOM in the log",
            "we are not out of GPU memory",
        ] {
            assert!(
                !features_of(&tokens(text), Reading::Pasted).contains("w:out of memory"),
                "{text}"
            );
        }
        // A denial further back denies something else.
        assert!(features("not after the first OOM").contains("w:out of memory"));
        assert!(features("CUDA error: out of memory").contains("w:out of memory"));
    }

    #[test]
    fn identifiers_are_api_names() {
        assert!(is_identifier("CUDA_ERROR_ILLEGAL_ADDRESS"));
        assert!(is_identifier("cudaErrorIllegalAddress"));
        assert!(is_identifier("CUBLAS_STATUS_ALLOC_FAILED"));
        assert!(!is_identifier("CUDA"));
        assert!(!is_identifier("__init__"));
        assert!(!is_identifier("memory"));
        assert!(is_identifier("cudaMalloc"));
        assert!(is_identifier("OutOfResources"));
        assert!(!is_identifier("PyTorch"));
        assert!(!is_identifier("RuntimeError"));
    }

    #[test]
    fn cuda_calls_are_api_names_and_error_and_library_names_are_not() {
        for name in [
            "cudaMallocHost",
            "cuCtxCreate",
            "cublasCreate",
            "cudnnCreate",
            "ncclCommInitRank",
            "cufftPlanMany",
            "curandCreateGenerator",
        ] {
            assert!(is_api_name(name), "{name}");
        }
        for name in [
            "cudaErrorMemoryAllocation",
            "ncclSystemError",
            "cudaSuccess",
            "cudaCheckError",
            "cuDNN",
            "cuBLAS",
            "cudaq",
            "CUDA_ERROR_OUT_OF_MEMORY",
            "curious",
        ] {
            assert!(!is_api_name(name), "{name}");
        }
        assert_eq!(
            api_mentions("pinned memory from cudaMallocHost, never freed with cudaFreeHost()"),
            [
                ("id:cudamallochost".to_owned(), false),
                ("id:cudafreehost".to_owned(), true)
            ]
        );
        // A figure breaks the clause: the call after it is made.
        assert_eq!(
            api_mentions("not 2 cudaFreeHost"),
            [("id:cudafreehost".to_owned(), false)]
        );
        // A clause's end ends what its words say.
        assert_eq!(
            api_mentions("(new without delete, cudaMallocHost without cudaFreeHost)"),
            [
                ("id:cudamallochost".to_owned(), false),
                ("id:cudafreehost".to_owned(), true)
            ]
        );
    }

    #[test]
    fn a_piece_of_an_english_sentence_is_no_feature() {
        let pasted = |t: &str| features_of(&tokens(t), Reading::Pasted);
        // Function words and one telling word: pieces of any sentence.
        let f = pasted("but source was compiled with a newer release");
        assert!(!f.contains("w:was compiled with"), "{f:?}");
        assert!(!pasted("Do you have any idea?").contains("w:do you have"));
        let f = pasted("Failed to allocate request on device");
        assert!(!f.contains("w:failed to allocate"), "{f:?}");
        // Two telling words around the function word make a phrase.
        assert!(pasted("CUDA out of memory. Tried to allocate").contains("w:tried to allocate"));
        assert!(pasted("CUDA error: out of memory").contains("w:out of memory"));
        assert!(
            pasted("all CUDA-capable devices are busy or unavailable")
                .contains("w:busy or unavailable")
        );
        assert!(pasted("GPU has fallen off the bus.").contains("w:off the bus"));
        // A contraction is function words: "shouldn't" says nothing alone.
        let f = pasted("`CudaMalloc` shouldn't be used to allocate temporary memory");
        assert!(!f.iter().any(|x| x.contains("shouldn")), "{f:?}");
        assert!(
            !pasted("It doesn't work")
                .iter()
                .any(|x| x.contains("doesn"))
        );
        // Without a function word, one telling word is enough.
        assert!(
            features("CUDA error: invalid device ordinal").contains("w:invalid device ordinal")
        );
        assert!(features("CUDA error: misaligned address").contains("w:misaligned address"));
        assert!(specific(&["nvml", "unknown", "error"]));
        assert!(!specific(&["to", "initialize", "the"]));
        assert!(!specific(&["cuda", "error", "invalid"]));
    }

    #[test]
    fn an_xid_report_gives_its_number() {
        let line = "Dec  2 10:43:35 node kernel: [240314.528856] NVRM: Xid (PCI:0000:07:00): 48, \
                    pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has \
                    been detected on GPU in the framebuffer";
        assert_eq!(xids(line), ["xid:48"]);
        assert_eq!(
            xids("NVRM: Xid (0000:03:00): 79, GPU has fallen off the bus."),
            ["xid:79"]
        );
        assert_eq!(
            xids("dmesg shows Xid 13, then XID: 43, then Xid 13 again"),
            ["xid:13", "xid:43"]
        );
        assert!(xids("hexid 48, Xid without a number, xidx 3").is_empty());
        // The report's frame is boilerplate: two Xid reports share no
        // phrase by it, only what each says.
        let f = features(line);
        assert!(f.contains("xid:48") && f.contains("w:uncorrectable double bit"));
        assert!(
            !f.iter().any(|x| x.contains("nvrm") || x.contains("pid")),
            "{f:?}"
        );
        assert!(is_error_name("xid:48") && !is_error_name("w:nvrm xid pci"));
    }

    #[test]
    fn warnings_information_and_table_rows_are_notes() {
        for note in [
            "/opt/conda/lib/python3.8/site-packages/torch/functional.py:568: UserWarning: torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
            "Warning: the display is not connected",
            "WARNING:tensorflow:From train.py:12: The name tf.Session is deprecated.",
            "[W socket.cpp:663] [c10d] The client socket has timed out after 600s",
            "[W1010 12:34:56.789012345 ProcessGroupNCCL.cpp:1168] Warning: NCCL_AVOID_RECORD_STREAMS=1 has no effect",
            "I0902 21:40:53.603015 2836338 nvc.c:376] initializing library context (version=1.10.0)",
            "2020-07-27 19:44:03.826201: I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:163] no NVIDIA GPU device is present: /dev/nvidia0 does not exist",
            "2019-07-11 12:42:11.226602: W tensorflow/core/common_runtime/bfc_allocator.cc:314] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.00GiB",
            "node1:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
            "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |",
            "+-----------------------------------------------------------------------------+",
            "|    0     31794    C   Unknown Error                                 5371MiB |",
            "CUDA Runtime version: 10.0.0",
            "GPU memory: 3.99957 GiB",
        ] {
            assert!(is_note(note), "{note}");
        }
        for error in [
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            "[W CUDAFunctions.cpp:109] Warning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment",
            "2019-07-11 12:42:11.226602: W tensorflow/compiler/xla/service/platform_util.cc:240] unable to create StreamExecutor for CUDA:0: failed initializing StreamExecutor",
            "2020-07-27 19:44:03.826179: E tensorflow/stream_executor/cuda/cuda_driver.cc:313] failed call to cuInit: UNKNOWN ERROR (-1)",
            "F1119 08:43:32.401912 27274 syncedmem.hpp:18] Check failed: error == cudaSuccess (2 vs. 0)  out of memory",
            "node1:1234:1234 [0] NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000",
            "Segmentation fault: 11",
            "I have a problem when running this code",
            "CUDA error: out of memory",
        ] {
            assert!(!is_note(error), "{error}");
        }
    }
}
