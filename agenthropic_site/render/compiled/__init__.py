"""The default theme's templates, compiled by Jinja ahead of time (theme.py `shipped_code`): a first build compiles none.

Written by `python -c 'from agenthropic_site.render import precompile; precompile.write_compiled_templates()'`; do not edit.
"""

OPTIONS = "('3.1.6', True, True, True, True, '\\n', '{%', '%}', '{{', '}}', '{#', '#}', None, None, True, False, [])"
# Each template's module and the SHA-1 of the source it was compiled from (as Jinja's bytecode cache checks it).
TEMPLATES = {
    '_insights.html': ('t__insights_html', 'fb2bae6b253cb7caf93324eaed308dc41231048b'),
    '_macros.html': ('t__macros_html', '75bdfb760993f8e5b33a507a43093d9b022b9e45'),
    '_reader.html': ('t__reader_html', '07dac52864c22d737fcf09e7e4259d0a00aa37c0'),
    'agent.html': ('t_agent_html', '7837b091acd0f7ff2c096442943b15302969127a'),
    'base.html': ('t_base_html', '71435fecd55015c6c4c5767e8150780aea509db6'),
    'index.html': ('t_index_html', 'f00b5d18bb44d666656b85d9cbf2fbcd38fc664a'),
    'project.html': ('t_project_html', '121fe401b3110487a2f418cace1915b5291be8b3'),
    'report.html': ('t_report_html', 'b27375f8eac585e827420591199aeabc3ca21222'),
    'search.html': ('t_search_html', 'bab38debe881756571dfbc5983a4a58399e26c3c'),
    'session.html': ('t_session_html', 'b21725030e51b5cf3682ed60ddfb452b6dbe35d2'),
    'transcript.html': ('t_transcript_html', 'b4139909c6caa1af6cb4237f85d4a23223a6769d'),
}
