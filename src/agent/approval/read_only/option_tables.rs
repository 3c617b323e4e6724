//! The options keel lets through for `sort` and `rg` in a command it proves read-only: every
//! option of GNU coreutils' `sort` and of ripgrep but those that write a file or run a program.
//!
//! `sort` reads its options with GNU `getopt_long`, so the table lists its refused options too
//! (`--output`, `--temporary-directory`, `--compress-program`, whose program reads the data as
//! its input: `--compress-program=sh` runs what is sorted): a prefix of one (`--outp=x`) is known
//! for what it is. ripgrep takes long options only as spelled; its `--pre` and
//! `--hostname-bin` run a program, and `-z` runs decompressors found on `PATH`.

use super::getopt::Options;

/// GNU `sort` (coreutils 9).
pub const SORT: Options = Options {
    program: "sort",
    flags: "bdfghiMnRrVcCmsuz",
    with_value: "ktS",
    optional_value: "",
    long: &["ignore-leading-blanks dictionary-order ignore-case general-numeric-sort \
         ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort random-source= \
         reverse sort= version-sort batch-size= check=? debug files0-from= key= merge stable \
         buffer-size= field-separator= parallel= unique zero-terminated help version"],
    refused_short: "oT",
    refused_long: &["output", "temporary-directory", "compress-program"],
    abbreviations: true,
    numbers: false,
};

/// ripgrep (13 and 14).
pub const RG: Options = Options {
    program: "rg",
    flags: "bcFhHiIlLnNopPqsSUvVwxau.0",
    with_value: "ABCdeEfgjmMrtT",
    optional_value: "",
    long: &[
        "after-context= auto-hybrid-regex no-auto-hybrid-regex before-context= binary no-binary \
         block-buffered no-block-buffered byte-offset no-byte-offset case-sensitive color= \
         colors= column no-column context= context-separator= no-context-separator count \
         count-matches crlf no-crlf debug trace dfa-size-limit= encoding= no-encoding engine= \
         field-context-separator= field-match-separator= file= files files-with-matches \
         files-without-match fixed-strings no-fixed-strings follow no-follow glob= \
         glob-case-insensitive no-glob-case-insensitive heading no-heading help hidden no-hidden \
         iglob= ignore-case ignore-file= ignore-file-case-insensitive \
         no-ignore-file-case-insensitive include-zero no-include-zero invert-match \
         no-invert-match json no-json line-buffered no-line-buffered line-number no-line-number \
         line-regexp max-columns= max-columns-preview no-max-columns-preview max-count= \
         max-depth= maxdepth= max-filesize= mmap no-mmap multiline no-multiline multiline-dotall \
         no-multiline-dotall no-config no-filename with-filename no-ignore ignore no-ignore-dot \
         ignore-dot no-ignore-exclude ignore-exclude no-ignore-files ignore-files \
         no-ignore-global ignore-global no-ignore-messages ignore-messages no-ignore-parent \
         ignore-parent no-ignore-vcs ignore-vcs no-messages messages no-pcre2-unicode \
         pcre2-unicode no-require-git require-git no-unicode unicode null null-data \
         one-file-system no-one-file-system only-matching passthru passthrough path-separator= \
         pcre2 no-pcre2 pcre2-version no-pre pre-glob= pretty quiet regex-size-limit= regexp= \
         replace= no-search-zip smart-case sort= sortr= sort-files no-sort-files stats no-stats \
         stop-on-nonmatch text no-text threads= trim no-trim type= type-not= type-add= \
         type-clear= type-list unrestricted version vimgrep word-regexp",
    ],
    refused_short: "z",
    refused_long: &["pre", "search-zip", "hostname-bin"],
    abbreviations: false,
    numbers: false,
};
