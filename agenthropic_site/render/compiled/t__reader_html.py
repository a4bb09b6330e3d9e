from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = '_reader.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_outline_list = l_0_outline_item = l_0_page_outline = l_0_pager = l_0_tools = l_0_where_the_transcript_is = missing
    try:
        t_1 = environment.filters['fine_usd']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'fine_usd' found.")
    try:
        t_2 = environment.filters['groupby']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'groupby' found.")
    try:
        t_3 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
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
        t_6 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    def macro(l_1_outline, l_1_folder, l_1_pages):
        t_7 = []
        l_1_outline_max = resolve('outline_max')
        if l_1_outline is missing:
            l_1_outline = undefined("parameter 'outline' was not provided", name='outline')
        if l_1_folder is missing:
            l_1_folder = undefined("parameter 'folder' was not provided", name='folder')
        if l_1_pages is missing:
            l_1_pages = undefined("parameter 'pages' was not provided", name='pages')
        pass
        if (not l_1_outline):
            pass
            t_7.append(
                '<p class="sub">No prompts in this transcript.</p>\n',
            )
        elif (t_3(l_1_outline) <= (undefined(name='outline_max') if l_1_outline_max is missing else l_1_outline_max)):
            pass
            t_7.append(
                '<ol class="outline">\n',
            )
            for l_2_entry in l_1_outline:
                _loop_vars = {}
                pass
                t_7.append(
                    escape(context.call((undefined(name='outline_item') if l_0_outline_item is missing else l_0_outline_item), l_2_entry, l_1_folder, _loop_vars=_loop_vars)),
                )
            l_2_entry = missing
            t_7.append(
                '</ol>\n',
            )
        else:
            pass
            t_7.extend((
                '<p class="sub">',
                escape(t_5(t_3(l_1_outline))),
                ' prompts; each page lists its own.</p>\n<ol class="outline by-page">\n',
            ))
            for (l_2_number, l_2_entries) in t_2(environment, l_1_outline, 'page'):
                _loop_vars = {}
                pass
                t_7.extend((
                    '<li><a href="',
                    escape(l_1_folder),
                    escape(l_2_number),
                    '.html">Page ',
                    escape(l_2_number),
                    '</a>: ',
                    escape(t_5(t_3(l_2_entries))),
                    ' prompt',
                ))
                if (t_3(l_2_entries) != 1):
                    pass
                    t_7.append(
                        's',
                    )
                t_7.extend((
                    ' from <time>',
                    escape(t_4(environment.getattr(environment.getitem(l_2_entries, 0), 'timestamp'))),
                    '</time>, the first: ',
                    escape((environment.getattr(environment.getitem(l_2_entries, 0), 'text') or '(a prompt without text)')),
                    '</li>\n',
                ))
            l_2_number = l_2_entries = missing
            t_7.append(
                '</ol>\n',
            )
        return concat(t_7)
    context.exported_vars.add('outline_list')
    context.vars['outline_list'] = l_0_outline_list = Macro(environment, macro, 'outline_list', ('outline', 'folder', 'pages'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_entry, l_1_folder):
        t_8 = []
        if l_1_entry is missing:
            l_1_entry = undefined("parameter 'entry' was not provided", name='entry')
        if l_1_folder is missing:
            l_1_folder = undefined("parameter 'folder' was not provided", name='folder')
        pass
        t_8.append(
            '<li><a href="',
        )
        if (not t_6(l_1_folder)):
            pass
            t_8.extend((
                escape(l_1_folder),
                escape(environment.getattr(l_1_entry, 'page')),
                '.html',
            ))
        t_8.extend((
            '#m',
            escape(environment.getattr(l_1_entry, 'index')),
            '">',
            escape((environment.getattr(l_1_entry, 'text') or '(a prompt without text)')),
            '</a> <time>',
            escape(t_4(environment.getattr(l_1_entry, 'timestamp'))),
            '</time>',
        ))
        if environment.getattr(l_1_entry, 'turn'):
            pass
            t_8.append(
                ' <span class="turn-cost" title="this turn and every agent it spawned">',
            )
            if (not t_6(environment.getattr(environment.getattr(l_1_entry, 'turn'), 'cost'))):
                pass
                t_8.append(
                    escape(t_1(environment.getattr(environment.getattr(l_1_entry, 'turn'), 'cost'))),
                )
            else:
                pass
                t_8.extend((
                    escape(t_5(environment.getattr(environment.getattr(environment.getattr(l_1_entry, 'turn'), 'tokens'), 'total'))),
                    ' tokens',
                ))
            t_8.append(
                '</span>',
            )
        t_8.append(
            '</li>\n',
        )
        return concat(t_8)
    context.exported_vars.add('outline_item')
    context.vars['outline_item'] = l_0_outline_item = Macro(environment, macro, 'outline_item', ('entry', 'folder'), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_entries):
        t_9 = []
        if l_1_entries is missing:
            l_1_entries = undefined("parameter 'entries' was not provided", name='entries')
        pass
        if l_1_entries:
            pass
            t_9.extend((
                '<details class="page-outline" id="page-outline"><summary>',
                escape(t_5(t_3(l_1_entries))),
                ' prompt',
            ))
            if (t_3(l_1_entries) != 1):
                pass
                t_9.append(
                    's',
                )
            t_9.append(
                ' on this page</summary>\n<ol class="outline">',
            )
            for l_2_entry in l_1_entries:
                _loop_vars = {}
                pass
                t_9.append(
                    escape(context.call((undefined(name='outline_item') if l_0_outline_item is missing else l_0_outline_item), l_2_entry, None, _loop_vars=_loop_vars)),
                )
            l_2_entry = missing
            t_9.append(
                '</ol></details>',
            )
        return concat(t_9)
    context.exported_vars.add('page_outline')
    context.vars['page_outline'] = l_0_page_outline = Macro(environment, macro, 'page_outline', ('entries',), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_number, l_1_count, l_1_label):
        t_10 = []
        if l_1_number is missing:
            l_1_number = undefined("parameter 'number' was not provided", name='number')
        if l_1_count is missing:
            l_1_count = undefined("parameter 'count' was not provided", name='count')
        if l_1_label is missing:
            l_1_label = 'Transcript pages'
        pass
        t_10.extend((
            '<nav class="pager" aria-label="',
            escape(l_1_label),
            '">',
        ))
        if (l_1_number > 1):
            pass
            t_10.extend((
                '<a rel="prev" href="',
                escape((l_1_number - 1)),
                '.html">← page ',
                escape((l_1_number - 1)),
                '</a>',
            ))
        t_10.extend((
            '<span>Page ',
            escape(l_1_number),
            ' of ',
            escape(l_1_count),
            '</span>\n',
        ))
        if (l_1_number < l_1_count):
            pass
            t_10.extend((
                '<a rel="next" href="',
                escape((l_1_number + 1)),
                '.html">page ',
                escape((l_1_number + 1)),
                ' →</a>',
            ))
        t_10.append(
            '</nav>',
        )
        return concat(t_10)
    context.exported_vars.add('pager')
    context.vars['pager'] = l_0_pager = Macro(environment, macro, 'pager', ('number', 'count', 'label'), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_shard, l_1_session_id):
        t_11 = []
        if l_1_shard is missing:
            l_1_shard = undefined("parameter 'shard' was not provided", name='shard')
        if l_1_session_id is missing:
            l_1_session_id = undefined("parameter 'session_id' was not provided", name='session_id')
        pass
        t_11.extend((
            '<nav class="transcript-tools" id="transcript-tools" aria-label="Transcript tools" data-search="',
            escape(l_1_shard),
            '" data-session="',
            escape(l_1_session_id),
            '"></nav>',
        ))
        return concat(t_11)
    context.exported_vars.add('tools')
    context.vars['tools'] = l_0_tools = Macro(environment, macro, 'tools', ('shard', 'session_id'), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_session):
        t_12 = []
        if l_1_session is missing:
            l_1_session = undefined("parameter 'session' was not provided", name='session')
        pass
        if (environment.getattr(l_1_session, 'main_state') == 'empty'):
            pass
            t_12.append(
                'The main transcript of this session is empty (0 bytes)',
            )
        else:
            pass
            t_12.append(
                'This session has no main transcript in the corpus',
            )
        t_12.append(
            ": what it did is in its agents' transcripts, on their pages",
        )
        return concat(t_12)
    context.exported_vars.add('where_the_transcript_is')
    context.vars['where_the_transcript_is'] = l_0_where_the_transcript_is = Macro(environment, macro, 'where_the_transcript_is', ('session',), False, False, False, context.eval_ctx.autoescape)

blocks = {}
debug_info = '4=48&5=58&6=63&8=68&11=82&13=85&19=118&20=128&24=169&25=174&26=189&30=202&31=213&32=227&33=232&37=247&38=256&42=264&43=269'