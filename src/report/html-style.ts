// The stylesheet of verdict.html (inline: the page loads nothing).
export const HTML_STYLE = `
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--pass:#1a7f37;--fail:#cf222e;--warn:#9a6700;--infra:#59636e;--blue:#0969da}
*{box-sizing:border-box}
body{font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;margin:0;padding:1.5rem 1rem 3rem;color:var(--fg);background:var(--soft)}
body>*{max-width:1440px;margin-left:auto;margin-right:auto}
code,pre,.diff-lines,.trace .ev,.pre{font-family:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace;font-size:12px}
a{color:var(--blue);text-decoration:none}a:hover{text-decoration:underline}
h2{font-size:1.25rem;margin:0 0 .6rem}h3{font-size:1rem;margin:1rem 0 .4rem}h4{font-size:.9rem;margin:1.1rem 0 .35rem}
section,header.verdict,nav,.callout{background:#fff;border:1px solid var(--line);border-radius:8px}
section{padding:1rem 1.25rem;margin-top:1rem}
header.verdict{padding:1rem 1.25rem;border-left:8px solid var(--infra)}
header.st-accept{border-left-color:var(--pass)}header.st-reject{border-left-color:var(--fail)}header.st-need_more_work{border-left-color:var(--warn)}
.kicker{color:var(--muted);font-size:.8rem;text-transform:uppercase;letter-spacing:.05em}
h1{font-size:1.5rem;margin:.2rem 0 .4rem;font-weight:500}
.reason{font-size:1.05rem;margin:.3rem 0 .5rem}
.meta{color:var(--muted);margin:0}
nav{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;padding:.5rem 1.25rem;margin-top:1rem}
.status{display:inline-block;padding:.1rem .6rem;border-radius:6px;font-weight:700;color:#fff;background:var(--infra);letter-spacing:.02em}
.status.small{font-size:.72rem;padding:0 .4rem;white-space:nowrap}
.st-accept.status{background:var(--pass)}.st-reject.status{background:var(--fail)}.st-need_more_work.status{background:var(--warn)}
table{border-collapse:collapse;width:100%;margin:.4rem 0}
th,td{border-bottom:1px solid var(--line);padding:.35rem .55rem;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600;font-size:.78rem;color:var(--muted);border-top:1px solid var(--line);vertical-align:bottom}
table.main th{line-height:1.25}
table.main tbody tr:nth-child(even){background:#fbfcfd}
tr.baseline{background:#f3f8ff!important}
tr.group td{border-top:2px solid var(--line)}
td.task{background:#fff}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.explain{max-width:28rem}
.sub{color:var(--muted);font-size:.78rem;white-space:normal}
.ci{color:var(--muted);font-size:.85em}
.bar{display:block;position:relative;width:8rem;height:6px;margin:.3rem 0 .1rem auto;background:#e6eaef;border-radius:3px}
.bar .band{position:absolute;top:0;bottom:0;background:#9cc3f5;border-radius:3px}
.bar .tick{position:absolute;top:-3px;bottom:-3px;width:2px;margin-left:-1px;background:var(--blue)}
.diffbar .zero{position:absolute;left:50%;top:-4px;bottom:-4px;width:1px;background:#8c959f}
.diffbar .band.up{background:#8fd6a0}.diffbar .band.down{background:#f5a3a3}
.tag{display:inline-block;font-size:.7rem;padding:0 .35rem;border-radius:9px;background:#ddf4ff;color:#0550ae;font-weight:600;vertical-align:1px}
.tag.warn{background:#fff1c2;color:var(--warn)}
code.warn,.warn{color:var(--warn)}
.muted{color:var(--muted)}
.pass,.up{color:var(--pass);font-weight:600}.fail,.down{color:var(--fail);font-weight:600}
.outcome{display:inline-block;font-size:.78rem;font-weight:600;padding:0 .45rem;border-radius:9px;white-space:nowrap}
.o-passed{background:#dafbe1;color:#116329}.o-failed{background:#ffebe9;color:#a40e26}.o-infrastructure_error{background:#eaeef2;color:#424a53}
.note{color:var(--muted);font-size:.85rem;margin:.5rem 0 0}
.callout{padding:.6rem 1rem;margin:.6rem 0;background:#fff8c5;border-color:#e6d38a}
.callout.bad{background:#ffebe9;border-color:#ffcecb;margin-top:1rem}
ul.reasons{margin:.5rem 0 0;padding-left:1.2rem}
.flips td.arrow{color:var(--muted);text-align:center;width:1%}
tr.flip-up td:first-child{box-shadow:inset 4px 0 var(--pass)}tr.flip-down td:first-child{box-shadow:inset 4px 0 var(--fail)}
.scroll-x{overflow-x:auto}
.scroll{max-height:30rem;overflow:auto;border:1px solid var(--line);border-radius:6px}
.scroll table{margin:0}.scroll th{position:sticky;top:0;border-top:0}
details.trial{border:1px solid var(--line);border-radius:6px;margin:.35rem 0;background:#fff}
details.trial>summary{cursor:pointer;padding:.45rem .75rem;list-style-position:inside}
details.trial[open]>summary{border-bottom:1px solid var(--line);background:var(--soft)}
.trial-body{padding:.25rem 1rem 1rem}
.explanation{margin:.6rem 0 .2rem;font-weight:500}
.links{margin:.1rem 0}
ul.attempts{margin:.2rem 0;padding-left:1.2rem}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:.6rem .75rem;overflow:auto;max-height:24rem;white-space:pre-wrap;word-break:break-word;margin:.2rem 0}
.pre,.trace .ev{white-space:pre-wrap;word-break:break-word}
.diff-files{max-height:48rem;overflow:auto}
.diff-file{border:1px solid var(--line);border-radius:6px;margin:.5rem 0;overflow:hidden}
.diff-head{background:var(--soft);padding:.35rem .6rem}
.diff-head+table.diff-lines{border-top:1px solid var(--line)}
.diff-head .path{font-weight:600}
.diff-stat{margin-left:.5rem;font-size:.8rem}.diff-stat .plus{color:var(--pass)}.diff-stat .minus{color:var(--fail)}
.badge{display:inline-block;font-size:.7rem;font-weight:600;padding:0 .4rem;border-radius:9px;background:#eaeef2;color:#424a53;text-transform:uppercase}
.st-added.badge{background:#dafbe1;color:#116329}.st-deleted.badge{background:#ffebe9;color:#a40e26}.st-renamed.badge,.st-copied.badge{background:#ddf4ff;color:#0550ae}
.diff-meta{color:var(--muted);font-size:.8rem;margin-left:.5rem}
.diff-binary,.diff-empty{padding:.3rem .6rem;color:var(--muted);font-size:.8rem;border-top:1px solid var(--line)}
.diff-binary{background:#fff8c5;color:#633c01}
.diff-preamble{border-radius:0;border:0;border-bottom:1px solid var(--line)}
table.diff-lines{margin:0}
table.diff-lines td{border:0;padding:0 .5rem;line-height:1.45}
table.diff-lines td.ln{width:1%;min-width:2.5rem;text-align:right;color:#8c959f;user-select:none;white-space:nowrap}
table.diff-lines td.code{white-space:pre-wrap;word-break:break-all}
.diff-lines .sign{display:inline-block;width:1.1em;user-select:none;color:#8c959f}
.diff-lines tr.add td{background:#e6ffec}.diff-lines tr.add td.ln{background:#ccffd8}.diff-lines tr.add .sign{color:#116329}
.diff-lines tr.del td{background:#ffebe9}.diff-lines tr.del td.ln{background:#ffd7d5}.diff-lines tr.del .sign{color:#a40e26}
.diff-lines tr.hunk td{background:#ddf4ff;color:#57606a;padding-top:.15rem;padding-bottom:.15rem}
.diff-lines tr.note td.code{color:var(--muted);font-style:italic}
.clip-note{background:#fff8c5;border:1px solid #e6d38a;border-radius:6px;padding:.4rem .7rem;font-size:.85rem}
table.trace{font-size:12px}table.trace td{padding:.2rem .5rem}
table.trace td:nth-child(-n+3),table.decisions td:nth-child(-n+2),table.decisions td:nth-child(n+4):nth-child(-n+5),table.checks td:nth-child(-n+3){width:1%;white-space:nowrap}
.trace .in{color:var(--fg)}.trace .out{color:var(--muted)}.trace .in+.out::before{content:"→ ";color:#8c959f}
.trace .say{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:13px;color:var(--fg)}
.trace .say+.in{margin-top:.15rem}
.trace tr.tone-error .out{color:var(--fail)}
tr.tone-deny td{background:#fff5f5}
tr.gap td{text-align:center;color:var(--muted);background:#fff8c5}
details.evidence{margin-top:.3rem}details.evidence>summary{cursor:pointer;color:var(--blue);font-size:.8rem}
.ev-label{color:var(--muted);font-size:.75rem;margin-top:.3rem}
pre.ev-text{max-height:16rem;font-size:11px}
.callout.regrade{background:#ddf4ff;border-color:#b6e3ff}
table.regrade td.dir{white-space:nowrap}
table.compact,table.flips{width:auto}table.compact td,table.compact th{padding:.25rem .75rem}
footer{margin-top:1rem}
`;
