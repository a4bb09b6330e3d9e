"""The default theme's templates, compiled by Jinja ahead of time (theme.py `shipped_code`): a first build compiles none.

Written by `python -c 'from agenthropic_site.render import precompile; precompile.write_compiled_templates()'`; do not edit.
"""

OPTIONS = "('3.1.6', True, True, True, True, '\\n', '{%', '%}', '{{', '}}', '{#', '#}', None, None, True, False, [])"
# Each template's module and the SHA-1 of the source it was compiled from (as Jinja's bytecode cache checks it).
TEMPLATES = {
    '_insights.html': ('t__insights_html', '61cd2d94f44596a3e300209af9efa92275243d37'),
    '_macros.html': ('t__macros_html', '75bdfb760993f8e5b33a507a43093d9b022b9e45'),
    '_reader.html': ('t__reader_html', '07dac52864c22d737fcf09e7e4259d0a00aa37c0'),
    'agent.html': ('t_agent_html', '7837b091acd0f7ff2c096442943b15302969127a'),
    'base.html': ('t_base_html', '71435fecd55015c6c4c5767e8150780aea509db6'),
    'index.html': ('t_index_html', '89d7cfb07ea096e6c1f012667d7fdae2004581c0'),
    'project.html': ('t_project_html', 'fad3e69fec94f3506a8accb7370d70704ce948d1'),
    'report.html': ('t_report_html', '3af5b0ed2ffb95b12697275b0c6364258acd3787'),
    'search.html': ('t_search_html', 'bab38debe881756571dfbc5983a4a58399e26c3c'),
    'session.html': ('t_session_html', 'b21725030e51b5cf3682ed60ddfb452b6dbe35d2'),
    'transcript.html': ('t_transcript_html', 'b4139909c6caa1af6cb4237f85d4a23223a6769d'),
}
