from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'agent.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_tokens_table = l_0_status_badge = l_0_outline_list = l_0_tools = l_0_tools_table = l_0_largest_table = missing
    pass
    parent_template = environment.get_template('base.html', 'agent.html')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    included_template = environment.get_template('_macros.html', 'agent.html')._get_default_module(context)
    l_0_tokens_table = getattr(included_template, 'tokens_table', missing)
    if l_0_tokens_table is missing:
        l_0_tokens_table = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'agent.html') does not export the requested name 'tokens_table'", name='tokens_table')
    l_0_status_badge = getattr(included_template, 'status_badge', missing)
    if l_0_status_badge is missing:
        l_0_status_badge = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'agent.html') does not export the requested name 'status_badge'", name='status_badge')
    context.vars.update({'tokens_table': l_0_tokens_table, 'status_badge': l_0_status_badge})
    context.exported_vars.difference_update(('tokens_table', 'status_badge'))
    included_template = environment.get_template('_reader.html', 'agent.html')._get_default_module(context)
    l_0_outline_list = getattr(included_template, 'outline_list', missing)
    if l_0_outline_list is missing:
        l_0_outline_list = undefined(f"the template {included_template.__name__!r} (imported on line 3 in 'agent.html') does not export the requested name 'outline_list'", name='outline_list')
    l_0_tools = getattr(included_template, 'tools', missing)
    if l_0_tools is missing:
        l_0_tools = undefined(f"the template {included_template.__name__!r} (imported on line 3 in 'agent.html') does not export the requested name 'tools'", name='tools')
    context.vars.update({'outline_list': l_0_outline_list, 'tools': l_0_tools})
    context.exported_vars.difference_update(('outline_list', 'tools'))
    included_template = environment.get_template('_insights.html', 'agent.html')._get_default_module(context)
    l_0_tools_table = getattr(included_template, 'tools_table', missing)
    if l_0_tools_table is missing:
        l_0_tools_table = undefined(f"the template {included_template.__name__!r} (imported on line 4 in 'agent.html') does not export the requested name 'tools_table'", name='tools_table')
    l_0_largest_table = getattr(included_template, 'largest_table', missing)
    if l_0_largest_table is missing:
        l_0_largest_table = undefined(f"the template {included_template.__name__!r} (imported on line 4 in 'agent.html') does not export the requested name 'largest_table'", name='largest_table')
    context.vars.update({'tools_table': l_0_tools_table, 'largest_table': l_0_largest_table})
    context.exported_vars.difference_update(('tools_table', 'largest_table'))
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_agent = resolve('agent')
    pass
    yield escape((environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'description') or environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'agent_id')))
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
    l_0_session = resolve('session')
    l_0_agent = resolve('agent')
    l_0_status_badge = resolve('status_badge')
    l_0_agents = resolve('agents')
    l_0_tokens_table = resolve('tokens_table')
    l_0_own_context = resolve('own_context')
    l_0_session_context_chart = resolve('session_context_chart')
    l_0_largest_table = resolve('largest_table')
    l_0_largest_requests = resolve('largest_requests')
    l_0_tools_table = resolve('tools_table')
    l_0_body = resolve('body')
    l_0_tools = resolve('tools')
    l_0_shard = resolve('shard')
    l_0_pages = resolve('pages')
    l_0_outline_list = resolve('outline_list')
    l_0_outline = resolve('outline')
    try:
        t_1 = environment.filters['linked_by']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'linked_by' found.")
    try:
        t_2 = environment.filters['list']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'list' found.")
    try:
        t_3 = environment.filters['selectattr']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'selectattr' found.")
    try:
        t_4 = environment.filters['short_time']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'short_time' found.")
    try:
        t_5 = environment.filters['thousands']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'thousands' found.")
    try:
        t_6 = environment.filters['usd']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No filter named 'usd' found.")
    try:
        t_7 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    yield '<p class="crumbs"><a href="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'index.html">Projects</a> › <a href="'
    yield escape((undefined(name='root') if l_0_root is missing else l_0_root))
    yield 'projects/'
    yield escape(environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'key'))
    yield '/index.html">'
    yield escape(environment.getattr((undefined(name='project') if l_0_project is missing else l_0_project), 'display_name'))
    yield '</a> › <a href="../index.html">'
    yield escape((environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'title') or environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'session_id')))
    yield '</a> ›</p>\n<h1>'
    yield escape((environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'description') or environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'agent_id')))
    yield '</h1>\n<dl class="facts">\n  <dt>Agent</dt><dd><code>'
    yield escape(environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'agent_id'))
    yield '</code></dd>\n  <dt>Kind</dt><dd>'
    yield escape(environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'kind'))
    yield '</dd>\n  <dt>Type</dt><dd>'
    yield escape((environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'agent_type') or '—'))
    yield '</dd>\n  <dt>Status</dt><dd>'
    yield escape(context.call((undefined(name='status_badge') if l_0_status_badge is missing else l_0_status_badge), environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'status'), environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'last_seen_at'), _block_vars=_block_vars))
    if environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'outcome_cause'):
        pass
        yield ' ('
        yield escape(environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'outcome_cause'))
        yield ')'
    yield '</dd>\n  <dt>Parent</dt><dd>'
    if (environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'parent_agent_id') == environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'session_id')):
        pass
        yield '<a href="../index.html">main agent</a>'
    elif environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'parent_agent_id'):
        pass
        yield '<a href="'
        yield escape(environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'parent_agent_id'))
        yield '.html">'
        yield escape((environment.getattr(environment.getitem((undefined(name='agents') if l_0_agents is missing else l_0_agents), environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'parent_agent_id')), 'description') or environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'parent_agent_id')))
        yield '</a>'
    else:
        pass
        yield 'unlinked'
    yield ' <span class="sub">('
    yield escape(t_1((undefined(name='agent') if l_0_agent is missing else l_0_agent)))
    yield ')</span></dd>\n  <dt>Children</dt><dd>'
    l_1_loop = missing
    t_8 = 1
    for l_1_child, l_1_loop in LoopContext(environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'children'), undefined):
        _loop_vars = {}
        pass
        yield '<a href="'
        yield escape(l_1_child)
        yield '.html">'
        yield escape((environment.getattr(environment.getitem((undefined(name='agents') if l_0_agents is missing else l_0_agents), l_1_child), 'description') or l_1_child))
        yield '</a>'
        if (not environment.getattr(l_1_loop, 'last')):
            pass
            yield ', '
        t_8 = 0
    l_1_loop = l_1_child = missing
    if t_8:
        pass
        yield 'none'
    yield '</dd>\n  <dt>Active</dt><dd>'
    yield escape(t_4(environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'first_seen_at')))
    yield ' – '
    yield escape(t_4(environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'last_seen_at')))
    yield '</dd>\n  <dt>Cost</dt><dd>'
    if environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'excluded_reason'):
        pass
        yield '— (the session is left out: '
        yield escape(environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'excluded_reason'))
        yield ')'
    else:
        pass
        yield escape(t_6(environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'cost')))
        yield ' (subtree '
        yield escape(t_6(environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'subtree_cost')))
        yield ')'
    yield '</dd>\n</dl>\n'
    if (not environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'excluded_reason')):
        pass
        yield '<section><h2>Tokens</h2>'
        yield escape(context.call((undefined(name='tokens_table') if l_0_tokens_table is missing else l_0_tokens_table), context.call(environment.getattr(environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'tokens'), 'as_dict'), _block_vars=_block_vars), _block_vars=_block_vars))
        yield '</section>'
    if (undefined(name='own_context') if l_0_own_context is missing else l_0_own_context):
        pass
        yield '<section class="context-growth">\n<h2>Context growth</h2>\n<p class="sub">The context of each of this agent\'s requests (input + cache read + cache write)'
        if t_2(context.eval_ctx, t_3(context, environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'compactions'), 'agent_id', 'equalto', environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'agent_id'))):
            pass
            yield '; dashed lines are its compactions'
        yield '. Requests above 200,000 tokens are long-context.</p>\n'
        yield escape(context.call((undefined(name='session_context_chart') if l_0_session_context_chart is missing else l_0_session_context_chart), (undefined(name='session') if l_0_session is missing else l_0_session), environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'agent_id'), (undefined(name='own_context') if l_0_own_context is missing else l_0_own_context), (undefined(name='agents') if l_0_agents is missing else l_0_agents), _block_vars=_block_vars))
        yield '\n<h3>Largest requests</h3>\n'
        yield escape(context.call((undefined(name='largest_table') if l_0_largest_table is missing else l_0_largest_table), (undefined(name='session') if l_0_session is missing else l_0_session), context.call((undefined(name='largest_requests') if l_0_largest_requests is missing else l_0_largest_requests), (undefined(name='own_context') if l_0_own_context is missing else l_0_own_context), _block_vars=_block_vars), (undefined(name='agents') if l_0_agents is missing else l_0_agents), '', _block_vars=_block_vars))
        yield '\n</section>\n'
    if environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'tools'):
        pass
        yield '<section><h2>Tool activity</h2>'
        yield escape(context.call((undefined(name='tools_table') if l_0_tools_table is missing else l_0_tools_table), environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'tools'), _block_vars=_block_vars))
        yield '</section>'
    yield '<section>\n<h2>Transcript</h2>\n'
    if (not t_7((undefined(name='body') if l_0_body is missing else l_0_body))):
        pass
        yield escape(context.call((undefined(name='tools') if l_0_tools is missing else l_0_tools), (undefined(name='shard') if l_0_shard is missing else l_0_shard), environment.getattr((undefined(name='session') if l_0_session is missing else l_0_session), 'session_id'), _block_vars=_block_vars))
        yield '\n<ol class="transcript">'
        yield escape((undefined(name='body') if l_0_body is missing else l_0_body))
        yield '</ol>\n'
    else:
        pass
        yield '<p class="sub">'
        yield escape(t_5((undefined(name='pages') if l_0_pages is missing else l_0_pages)))
        yield ' pages: <a href="'
        yield escape(environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'agent_id'))
        yield '/1.html">read from the start</a> · <a href="'
        yield escape(environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'agent_id'))
        yield '/'
        yield escape((undefined(name='pages') if l_0_pages is missing else l_0_pages))
        yield '.html">the latest page</a></p>\n'
        yield escape(context.call((undefined(name='outline_list') if l_0_outline_list is missing else l_0_outline_list), (undefined(name='outline') if l_0_outline is missing else l_0_outline), markup_join((environment.getattr((undefined(name='agent') if l_0_agent is missing else l_0_agent), 'agent_id'), '/', )), (undefined(name='pages') if l_0_pages is missing else l_0_pages), _block_vars=_block_vars))
        yield '\n'
    yield '</section>\n'

blocks = {'title': block_title, 'content': block_content}
debug_info = '1=13&2=16&3=25&4=34&5=45&6=57&7=126&8=136&10=138&11=140&12=142&13=144&14=151&15=169&16=186&17=190&19=202&20=207&23=210&24=214&26=216&29=218&32=224&33=226&34=228&36=233&37=241'