from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'transcript.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_agent = resolve('agent')
    l_0_session = resolve('session')
    l_0_pager = l_0_page_outline = l_0_tools = l_0_where_the_transcript_is = l_0_title = missing
    pass
    parent_template = environment.get_template('base.html', 'transcript.html')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    included_template = environment.get_template('_reader.html', 'transcript.html')._get_default_module(context)
    l_0_pager = getattr(included_template, 'pager', missing)
    if l_0_pager is missing:
        l_0_pager = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'transcript.html') does not export the requested name 'pager'", name='pager')
    l_0_page_outline = getattr(included_template, 'page_outline', missing)
    if l_0_page_outline is missing:
        l_0_page_outline = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'transcript.html') does not export the requested name 'page_outline'", name='page_outline')
    l_0_tools = getattr(included_template, 'tools', missing)
    if l_0_tools is missing:
        l_0_tools = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'transcript.html') does not export the requested name 'tools'", name='tools')
    l_0_where_the_transcript_is = getattr(included_template, 'where_the_transcript_is', missing)
    if l_0_where_the_transcript_is is missing:
        l_0_where_the_transcript_is = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'transcript.html') does not export the requested name 'where_the_transcript_is'", name='where_the_transcript_is')
    context.vars.update({'pager': l_0_pager, 'page_outline': l_0_page_outline, 'tools': l_0_tools, 'where_the_transcript_is': l_0_where_the_transcript_is})
    context.exported_vars.difference_update(('pager', 'page_outline', 'tools', 'where_the_transcript_is'))
    l_0_title = ((environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'description') or environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'agent_id')) if (undefined(name='agent') if l_0_agent is missing else l_0_agent) else (environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'title') or environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'session_id')))
    context.vars['title'] = l_0_title
    context.exported_vars.add('title')
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_title = resolve('title')
    l_0_number = resolve('number')
    pass
    yield escape((undefined(name='title') if l_0_title is missing else l_0_title))
    yield ' · page '
    yield escape((undefined(name='number') if l_0_number is missing else l_0_number))
    yield ' · agenthropic'

def block_content(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_root = resolve('root')
    l_0_project = resolve('project')
    l_0_agent = resolve('agent')
    l_0_session = resolve('session')
    l_0_title = resolve('title')
    l_0_number = resolve('number')
    l_0_count = resolve('count')
    l_0_where_the_transcript_is = resolve('where_the_transcript_is')
    l_0_pager = resolve('pager')
    l_0_page_outline = resolve('page_outline')
    l_0_outline = resolve('outline')
    l_0_tools = resolve('tools')
    l_0_shard = resolve('shard')
    l_0_body = resolve('body')
    pass
    yield '<p class="crumbs"><a href="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'index.html">Projects</a> › <a href="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'projects/'
    yield escape(environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'key'))
    yield '/index.html">'
    yield escape(environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'display_name'))
    yield '</a> › '
    if (undefined(name='agent') if l_0_agent is missing else l_0_agent):
        pass
        yield '<a href="../../index.html">'
        yield escape((environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'title') or environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'session_id')))
        yield '</a> › <a href="../'
        yield escape(environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'agent_id'))
        yield '.html">'
        yield escape((environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'description') or environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'agent_id')))
        yield '</a>'
    else:
        pass
        yield '<a href="../index.html">'
        yield escape((environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'title') or environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'session_id')))
        yield '</a>'
    yield ' ›</p>\n<h1>'
    yield escape((undefined(name='title') if l_0_title is missing else l_0_title))
    yield '</h1>\n<p class="sub">Transcript, page '
    yield escape((undefined(name='number') if l_0_number is missing else l_0_number))
    yield ' of '
    yield escape((undefined(name='count') if l_0_count is missing else l_0_count))
    yield '. The outline of every prompt is on the '
    if (undefined(name='agent') if l_0_agent is missing else l_0_agent):
        pass
        yield '<a href="../'
        yield escape(environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'agent_id'))
        yield '.html">agent\'s page</a>'
    else:
        pass
        yield '<a href="../index.html">session\'s page</a>'
    yield '.</p>\n'
    if ((not (undefined(name='agent') if l_0_agent is missing else l_0_agent)) and (environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'main_state') != 'present')):
        pass
        yield '<p class="banner">'
        yield escape(context.call((undefined(name='where_the_transcript_is') if l_0_where_the_transcript_is is missing else l_0_where_the_transcript_is), (undefined(name='session') if l_0_session is missing else l_0_session), _block_vars=_block_vars))
        yield '.</p>'
    yield escape(context.call((undefined(name='pager') if l_0_pager is missing else l_0_pager), (undefined(name='number') if l_0_number is missing else l_0_number), (undefined(name='count') if l_0_count is missing else l_0_count), _block_vars=_block_vars))
    yield '\n'
    yield escape(context.call((undefined(name='page_outline') if l_0_page_outline is missing else l_0_page_outline), (undefined(name='outline') if l_0_outline is missing else l_0_outline), _block_vars=_block_vars))
    yield '\n'
    yield escape(context.call((undefined(name='tools') if l_0_tools is missing else l_0_tools), (undefined(name='shard') if l_0_shard is missing else l_0_shard), environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'session_id'), _block_vars=_block_vars))
    yield '\n<ol class="transcript">'
    yield escape((undefined(name='body') if l_0_body is missing else l_0_body))
    yield '</ol>\n'
    yield escape(context.call((undefined(name='pager') if l_0_pager is missing else l_0_pager), (undefined(name='number') if l_0_number is missing else l_0_number), (undefined(name='count') if l_0_count is missing else l_0_count), 'Transcript pages, at the end', _block_vars=_block_vars))
    yield '\n'

blocks = {'title': block_title, 'content': block_content}
debug_info = '1=15&2=18&3=33&4=38&5=53&6=76&7=99&8=101&9=114&10=119&11=121&12=123&13=125&14=127'